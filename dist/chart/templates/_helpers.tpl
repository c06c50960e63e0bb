{{/* The manager image: repository:tag, @digest when pinned; the tag defaults to v<appVersion>. */}}
{{- define "multi-operator.managerImage" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}{{ with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}

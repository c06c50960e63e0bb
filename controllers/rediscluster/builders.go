package rediscluster

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/placement"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/pkg/podsecurity"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

const (
	// appName is the app.kubernetes.io/name of every child.
	appName = "rediscluster"
	// DefaultImage runs when neither spec.image nor REDIS_IMAGE is set.
	DefaultImage = "redis:7.4-alpine"
	// ClientPort serves Redis clients.
	ClientPort = 6379
	// BusPort is the cluster bus, the client port plus 10000: the port
	// CLUSTER MEET assumes when given the client port alone.
	BusPort = ClientPort + 10000
	// BusTLSPort is the TLS port of a cluster whose clients speak plain
	// text (no spec.tls): only its peers use it, to replicate, since with
	// a TLS bus the nodes gossip their TLS port as their port.
	BusTLSPort = 6380
	// containerName names the redis-server container.
	containerName = "redis"
	// runAsUser is the redis user of the official images.
	runAsUser = 999
	// dataDir holds the cluster config file and the append-only file.
	dataDir = "/data"
	// dataVolume names the data volume and its claim template.
	dataVolume = "data"
	// aclDir is where a node reads its users and masterauth from the
	// <name>-acl Secret; aclVolume names that volume.
	aclDir    = "/etc/redis/acl"
	aclVolume = "acl"
	// tlsDir is where a node reads the TLS Secret; tlsVolume names it.
	tlsDir    = "/etc/redis/tls"
	tlsVolume = "tls"
	// busDir is where a node reads the <name>-bus Secret; busVolume names it.
	busDir    = "/etc/redis/bus"
	busVolume = "bus"
	// DefaultExporterImage runs the exporter sidecar when neither
	// spec.monitoring.exporter.image nor REDIS_EXPORTER_IMAGE is set: the
	// release of redis_exporter that hack/tools/redisexporter pins.
	DefaultExporterImage = "oliver006/redis_exporter:v1.62.0"
	// ExporterContainerName names the redis_exporter sidecar.
	ExporterContainerName = "exporter"
	// MetricsPort is where the exporter serves /metrics: redis_exporter's
	// own port.
	MetricsPort = 9121
	// MetricsPortName names MetricsPort in the pod, for a PodMonitor.
	MetricsPortName = podmonitor.PortName
	// exporterDir is where the exporter alone reads the <name>-exporter
	// Secret's password file; exporterVolume names that volume.
	exporterDir    = "/etc/redis-exporter"
	exporterVolume = "exporter"
)

// Images are the images a RedisCluster's pods run unless its spec names
// its own: the manager's REDIS_IMAGE and REDIS_EXPORTER_IMAGE.
type Images struct {
	// Redis runs redis-server.
	Redis string
	// Exporter runs the redis_exporter sidecar.
	Exporter string
}

// image is the image that runs rc.
func image(rc *cachev1.RedisCluster, defaultImage string) string {
	if rc.Spec.Image != "" {
		return rc.Spec.Image
	}
	return defaultImage
}

// Replicas is the StatefulSet size rc asks for: every shard's master and replicas.
func Replicas(rc *cachev1.RedisCluster) int32 {
	return rc.Spec.Size * (1 + rc.Spec.ReplicasPerMaster)
}

// PodName is the name of the StatefulSet's pod with the given ordinal.
func PodName(rc *cachev1.RedisCluster, ordinal int32) string {
	return fmt.Sprintf("%s-%d", rc.Name, ordinal)
}

// HeadlessServiceName names the Service that gives every pod a DNS name.
func HeadlessServiceName(rc *cachev1.RedisCluster) string { return rc.Name + "-headless" }

// Topology lays rc's pods out in shards: shard i is pods
// i*(1+replicasPerMaster) onwards, the first of them its master, so growing
// the size only adds whole shards at the end. Pods from Replicas(rc) up to
// running (the StatefulSet's current size) are leaving, and so is the pod a
// rollout evacuates (status.rollout.evacuating): a master without replica
// or volume hands its slots to the others before it restarts empty.
func Topology(rc *cachev1.RedisCluster, running int32) redisadmin.Topology {
	evacuating := ""
	if rc.Status.Rollout != nil {
		evacuating = rc.Status.Rollout.Evacuating
	}
	per := 1 + rc.Spec.ReplicasPerMaster
	t := redisadmin.Topology{}
	for s := int32(0); s < rc.Spec.Size; s++ {
		var shard []string
		for j := int32(0); j < per; j++ {
			if name := PodName(rc, s*per+j); name != evacuating {
				shard = append(shard, name)
			}
		}
		if len(shard) > 0 {
			t.Shards = append(t.Shards, shard)
		}
	}
	for i := Replicas(rc); i < running; i++ {
		t.Leaving = append(t.Leaving, PodName(rc, i))
	}
	if evacuating != "" {
		t.Leaving = append(t.Leaving, evacuating)
	}
	return t
}

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
}

// DesiredHeadlessService gives each pod a stable DNS name and publishes pods
// before they are ready: nodes must reach each other's bus to become ready.
func DesiredHeadlessService(rc *cachev1.RedisCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: HeadlessServiceName(rc), Namespace: rc.Namespace, Labels: ownership.Labels(appName, rc.Name)},
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 ownership.SelectorLabels(appName, rc.Name),
			Ports:                    []corev1.ServicePort{servicePort("redis", ClientPort), servicePort("bus", BusPort)},
		},
	}
}

// DesiredClientService is the entry point for cluster-aware clients, which
// then follow MOVED redirections to the pods.
func DesiredClientService(rc *cachev1.RedisCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, Labels: ownership.Labels(appName, rc.Name)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: ownership.SelectorLabels(appName, rc.Name),
			Ports:    []corev1.ServicePort{servicePort("redis", ClientPort)},
		},
	}
}

// DesiredPodDisruptionBudget lets voluntary disruptions take one node at a
// time, so a master and its replica never go together.
func DesiredPodDisruptionBudget(rc *cachev1.RedisCluster) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, Labels: ownership.Labels(appName, rc.Name)},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: ownership.SelectorLabels(appName, rc.Name)},
		},
	}
}

// DesiredNetworkPolicy admits clients to the client port from anywhere, to
// the exporter's metrics port the pods of the namespaces scrapers selects
// (from anywhere when nil), and to the bus and the replication TLS port
// only the cluster's own pods, on networks that enforce NetworkPolicies.
// It is the only isolation of a bus that speaks plain text or trusts the
// user's CA (see BusTLS), and the only bound on who may make an exporter
// dial an address of their choosing (/scrape?target=), which redis_exporter
// cannot turn off.
func DesiredNetworkPolicy(rc *cachev1.RedisCluster, scrapers *metav1.LabelSelector) *networkingv1.NetworkPolicy {
	selector := metav1.LabelSelector{MatchLabels: ownership.SelectorLabels(appName, rc.Name)}
	port := func(p int32) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(p))}
	}
	clientPorts := []networkingv1.NetworkPolicyPort{port(ClientPort)}
	var scrape []networkingv1.NetworkPolicyIngressRule
	switch {
	case !ExporterEnabled(rc):
	case scrapers == nil:
		clientPorts = append(clientPorts, port(MetricsPort))
	default:
		scrape = append(scrape, networkingv1.NetworkPolicyIngressRule{
			Ports: []networkingv1.NetworkPolicyPort{port(MetricsPort)},
			// A namespace selector alone means every pod of those namespaces.
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: scrapers.DeepCopy()}},
		})
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, Labels: ownership.Labels(appName, rc.Name)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: selector,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: append([]networkingv1.NetworkPolicyIngressRule{
				{Ports: clientPorts},
				{
					Ports: []networkingv1.NetworkPolicyPort{port(BusPort), port(BusTLSPort)},
					// A pod selector alone means pods of this namespace.
					From: []networkingv1.NetworkPolicyPeer{{PodSelector: selector.DeepCopy()}},
				},
			}, scrape...),
		},
	}
}

// cpuAndMemory are requests of cpu and memory, and limits of limitCPU and
// limitMemory.
func cpuAndMemory(cpu, memory, limitCPU, limitMemory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(limitCPU),
			corev1.ResourceMemory: resource.MustParse(limitMemory),
		},
	}
}

// defaultResources apply when spec.resources is absent.
func defaultResources() corev1.ResourceRequirements {
	return cpuAndMemory("100m", "128Mi", "1", "512Mi")
}

// redisArgs configure redis-server on the command line, after the file
// with its users and masterauth, so no secret is in the pod spec. The node
// announces its pod IP: a pod that restarts with a new IP tells the others,
// and the operator meets it again if they missed it. With spec.tls the
// client port, the cluster bus and replication speak TLS only; nodes
// present their certificate to each other, and clients need none. Without
// it and with busTLS, clients keep the plain client port while the bus and
// replication speak TLS with the certificate of <name>-bus, which every
// peer must present: a node of another cluster cannot join.
func redisArgs(rc *cachev1.RedisCluster, busTLS bool) []string {
	plainPort := strconv.Itoa(ClientPort)
	if rc.Spec.TLS != nil {
		plainPort = "0" // none: the client port speaks TLS
	}
	args := []string{
		aclDir + "/" + ACLKey,
		"--port", plainPort,
		"--cluster-enabled", "yes",
		"--cluster-config-file", dataDir + "/nodes.conf",
		"--cluster-announce-ip", "$(POD_IP)",
		"--cluster-node-timeout", "5000",
		"--dir", dataDir,
		"--appendonly", "yes",
		// Protected mode would refuse every other pod while the default
		// user needs no password (spec.auth.disabled).
		"--protected-mode", "no",
	}
	for _, key := range slices.Sorted(maps.Keys(rc.Spec.RedisConfig)) {
		args = append(args, "--"+key, rc.Spec.RedisConfig[key])
	}
	switch {
	case rc.Spec.TLS != nil:
		args = append(args, tlsArgs(ClientPort, "optional", tlsDir)...)
	case busTLS:
		args = append(args, tlsArgs(BusTLSPort, "yes", busDir)...)
		// With a TLS bus the bus port would follow the TLS port.
		args = append(args, "--cluster-port", strconv.Itoa(BusPort))
	}
	return args
}

// tlsArgs make the bus and replication speak TLS, with the TLS port port,
// the files of dir, and tls-auth-clients authClients.
func tlsArgs(port int, authClients, dir string) []string {
	return []string{
		"--tls-port", strconv.Itoa(port),
		"--tls-cluster", "yes",
		"--tls-replication", "yes",
		"--tls-auth-clients", authClients,
		"--tls-cert-file", dir + "/" + TLSCertKey,
		"--tls-key-file", dir + "/" + TLSKeyKey,
		"--tls-ca-cert-file", dir + "/" + TLSCAKey,
	}
}

// BusTLS reports whether rc's nodes run a TLS bus with <name>-bus, given
// its StatefulSet, nil before it exists. Redis cannot mix a plain and a
// TLS bus, and nodes restarted one by one into a TLS bus would split the
// cluster, so a cluster keeps the bus its StatefulSet was created with.
// With spec.tls the bus uses the user's certificate instead.
func BusTLS(rc *cachev1.RedisCluster, existing *appsv1.StatefulSet) bool {
	if rc.Spec.TLS != nil {
		return false
	}
	if existing == nil {
		return true
	}
	for _, c := range existing.Spec.Template.Spec.Containers {
		if c.Name == containerName && slices.Contains(c.Args, "--tls-cluster") {
			return true
		}
	}
	return false
}

// secretVolume projects keys of the Secret name as files, readable by the
// redis group (fsGroup): Secret files are root's.
func secretVolume(volume, name string, keys ...string) corev1.Volume {
	items := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return corev1.Volume{
		Name: volume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, DefaultMode: ptr.To[int32](0o440), Items: items,
		}},
	}
}

// ExporterEnabled reports whether rc's pods run the exporter sidecar: on
// unless spec.monitoring.exporter.disabled.
func ExporterEnabled(rc *cachev1.RedisCluster) bool {
	m := rc.Spec.Monitoring
	return m == nil || m.Exporter == nil || !m.Exporter.Disabled
}

// ExporterRedisAddr is the address the exporter scrapes: its own pod's
// redis-server on the loopback, over TLS when the client port speaks only
// TLS (spec.tls).
func ExporterRedisAddr(tls bool) string {
	if tls {
		return "rediss://localhost:" + strconv.Itoa(ClientPort)
	}
	return "redis://localhost:" + strconv.Itoa(ClientPort)
}

// ExporterArgs are redis_exporter's flags: it logs in as the exporter's
// ACL user with the password of passwordFile (keyed by ExporterRedisAddr),
// and skips CONFIG GET, which that user may not run. With TLS it skips the
// server certificate's check: the server is its own pod's redis-server on
// the loopback, which nothing outside the pod can reach or stand in for,
// and a user's certificate rarely names localhost; it presents no
// certificate of its own (the nodes do not require one from clients), so
// it needs no private key.
func ExporterArgs(tls bool, passwordFile string) []string {
	args := []string{
		"--redis.addr=" + ExporterRedisAddr(tls),
		"--redis.user=" + redisadmin.ExporterUser,
		"--redis.password-file=" + passwordFile,
		"--config-command=-",
		"--web.listen-address=:" + strconv.Itoa(MetricsPort),
		"--connection-timeout=5s",
	}
	if tls {
		args = append(args, "--skip-tls-verification")
	}
	return args
}

// defaultExporterResources apply when spec.monitoring.exporter.resources
// is absent: the exporter holds one connection and answers one scrape at
// a time.
func defaultExporterResources() corev1.ResourceRequirements {
	return cpuAndMemory("10m", "32Mi", "200m", "64Mi")
}

// ExporterReloadPath is redis_exporter's endpoint that reads its password
// file again, which it otherwise reads only at start. It is the sidecar's
// liveness probe, so that the kubelet has it read a rotated <name>-exporter
// once projected, without restarting the pod (and so redis-server), and
// restarts the sidecar alone when the file cannot be read.
const ExporterReloadPath = "/-/reload"

// exporterContainer is the redis_exporter sidecar of rc's pods. It has
// only a liveness probe, on ExporterReloadPath: a readiness probe would
// take the pod, and so redis-server, out of the Services whenever the
// exporter lags.
func exporterContainer(rc *cachev1.RedisCluster, defaultImage string) corev1.Container {
	img, resources := defaultImage, defaultExporterResources()
	if e := rc.Spec.Monitoring; e != nil && e.Exporter != nil {
		if e.Exporter.Image != "" {
			img = e.Exporter.Image
		}
		if e.Exporter.Resources != nil {
			resources = *e.Exporter.Resources
		}
	}
	return corev1.Container{
		Name:  ExporterContainerName,
		Image: img,
		// The image's entrypoint is redis_exporter, in ours and upstream's.
		Args:  ExporterArgs(rc.Spec.TLS != nil, exporterDir+"/"+ExporterPasswordFileKey),
		Ports: []corev1.ContainerPort{{Name: MetricsPortName, ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}},
		LivenessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: ExporterReloadPath, Port: intstr.FromString(MetricsPortName)}},
			PeriodSeconds:    10,
			TimeoutSeconds:   5,
			FailureThreshold: 3,
		},
		Resources:       resources,
		SecurityContext: podsecurity.ContainerContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: exporterVolume, MountPath: exporterDir, ReadOnly: true}},
	}
}

// spread prefers to put the cluster's pods on different nodes, so that a
// node's loss takes no master together with its replica.
func spread(rc *cachev1.RedisCluster) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey:   corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: ownership.SelectorLabels(appName, rc.Name)},
			},
		}},
	}}
}

// DesiredStatefulSet runs replicas redis-server pods in cluster mode, each
// with the redis_exporter sidecar unless disabled (ExporterEnabled), which
// alone mounts the <name>-exporter Secret. The
// caller chooses replicas: it stays above Replicas(rc) until the leaving
// nodes are drained.
// busTLS (see BusTLS) isolates the bus with <name>-bus. spec.podTemplate
// places the pods; its affinity replaces the default anti-affinity (spread)
// and its topologySpreadConstraints the default zone spread, each only
// when given.
func DesiredStatefulSet(rc *cachev1.RedisCluster, images Images, replicas int32, busTLS bool) *appsv1.StatefulSet {
	labels := ownership.Labels(appName, rc.Name)
	resources := defaultResources()
	if rc.Spec.Resources != nil {
		resources = *rc.Spec.Resources
	}
	tcp := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ClientPort)}}
	container := corev1.Container{
		Name:    containerName,
		Image:   image(rc, images.Redis),
		Command: []string{"redis-server"},
		Args:    redisArgs(rc, busTLS),
		Env: []corev1.EnvVar{{
			Name:      "POD_IP",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}},
		}},
		Ports: []corev1.ContainerPort{
			{Name: "redis", ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
			{Name: "bus", ContainerPort: BusPort, Protocol: corev1.ProtocolTCP},
		},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 5},
		LivenessProbe:   &corev1.Probe{ProbeHandler: tcp, InitialDelaySeconds: 15, PeriodSeconds: 10},
		Resources:       resources,
		SecurityContext: podsecurity.ContainerContext(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: dataVolume, MountPath: dataDir},
			{Name: aclVolume, MountPath: aclDir, ReadOnly: true},
		},
	}
	volumes := []corev1.Volume{secretVolume(aclVolume, ACLSecretName(rc), ACLKey)}
	switch {
	case rc.Spec.TLS != nil:
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true})
		volumes = append(volumes, secretVolume(tlsVolume, rc.Spec.TLS.SecretName, TLSCertKey, TLSKeyKey, TLSCAKey))
	case busTLS:
		container.Ports = append(container.Ports, corev1.ContainerPort{Name: "bus-tls", ContainerPort: BusTLSPort, Protocol: corev1.ProtocolTCP})
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: busVolume, MountPath: busDir, ReadOnly: true})
		volumes = append(volumes, secretVolume(busVolume, BusSecretName(rc), TLSCertKey, TLSKeyKey, TLSCAKey))
	}
	containers := []corev1.Container{container}
	if ExporterEnabled(rc) {
		containers = append(containers, exporterContainer(rc, images.Exporter))
		volumes = append(volumes, secretVolume(exporterVolume, ExporterSecretName(rc), ExporterPasswordFileKey))
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: HeadlessServiceName(rc),
			// The operator joins the nodes; they need not start one by one.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			// The operator rolls changes out itself, one node at a time,
			// replicas first and masters only after a failover.
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			Selector:       &metav1.LabelSelector{MatchLabels: ownership.SelectorLabels(appName, rc.Name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					Affinity:                     spread(rc),
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew:           1,
						TopologyKey:       corev1.LabelTopologyZone,
						WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector:     &metav1.LabelSelector{MatchLabels: ownership.SelectorLabels(appName, rc.Name)},
					}},
					SecurityContext: podsecurity.PodContext(runAsUser),
					Containers:      containers,
					Volumes:         volumes,
				},
			},
		},
	}
	if st := rc.Spec.Storage; st != nil {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: dataVolume, Labels: labels},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: st.Size}},
				StorageClassName: st.StorageClassName,
			},
		}}
	} else {
		sts.Spec.Template.Spec.Volumes = append(sts.Spec.Template.Spec.Volumes, corev1.Volume{
			Name:         dataVolume,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
		})
	}
	placement.Apply(sts, &sts.Spec.Template, rc.Spec.PodTemplate)
	return sts
}

// PodMonitorTarget is what rc's PodMonitor is built from: it selects rc's
// pods by the operator's selector labels and scrapes their exporters'
// MetricsPortName port, with spec.monitoring.podMonitor's interval and
// labels.
func PodMonitorTarget(rc *cachev1.RedisCluster) podmonitor.Target {
	return podmonitor.TargetFor(appName, rc.Namespace, rc.Name, rc.Spec.Monitoring.Shared())
}

package memcached

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/placement"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/pkg/podsecurity"
)

const (
	// appName is the app.kubernetes.io/name of every child.
	appName = "memcached"
	// DefaultImage runs unless MEMCACHED_IMAGE names another one. The
	// tutorial's memcached:1.4.36-alpine still works as an override.
	DefaultImage = "memcached:1.6.45-alpine"
	// portName names the container port, the probes' target and the
	// Service port, so that clients look up _memcached._tcp SRV records.
	portName = "memcached"
	// containerName is the memcached container's name.
	containerName = "memcached"
	// runAsUser is the tutorial's uid; memcached needs no file of its own.
	runAsUser = 1001
	// cacheMegabytes is memcached's item memory (-m), the tutorial's 64 MB.
	cacheMegabytes = 64
	// defaultPort is spec.containerPort's default, memcached's own.
	defaultPort = 11211
	// ExporterContainerName is the exporter sidecar's container name.
	ExporterContainerName = "exporter"
	// ExporterPort is the exporter's metrics port, prometheus/memcached_exporter's.
	ExporterPort = cachev1alpha1.ExporterPort
)

// exporterResources are the exporter's resources unless
// spec.monitoring.exporter.resources replaces them: it holds one scrape's
// replies at a time, bounded by pkg/memcachedexporter.
func exporterResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("32Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("100m"),
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		},
	}
}

// ExporterArgs is the exporter's command line: the manager binary's
// memcached-exporter subcommand, scraping the memcached of its own pod.
func ExporterArgs(m *cachev1alpha1.Memcached) []string {
	return []string{
		"memcached-exporter",
		"--listen", ":" + strconv.Itoa(ExporterPort),
		"--address", "127.0.0.1:" + strconv.Itoa(int(port(m))),
	}
}

// exporterContainer is the exporter sidecar of m, running exporterImage
// unless spec.monitoring.exporter.image names another; nil when m disables
// the exporter.
func exporterContainer(m *cachev1alpha1.Memcached, exporterImage string) *corev1.Container {
	if !podmonitor.ExporterEnabled(m.Spec.Monitoring) {
		return nil
	}
	resources := exporterResources()
	if e := m.Spec.Monitoring; e != nil && e.Exporter != nil {
		if e.Exporter.Image != "" {
			exporterImage = e.Exporter.Image
		}
		if e.Exporter.Resources != nil {
			resources = *e.Exporter.Resources.DeepCopy()
		}
	}
	return &corev1.Container{
		Name:            ExporterContainerName,
		Image:           exporterImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"/manager"},
		Args:            ExporterArgs(m),
		Ports: []corev1.ContainerPort{{
			Name:          podmonitor.PortName,
			ContainerPort: ExporterPort,
			Protocol:      corev1.ProtocolTCP,
		}},
		// Restarts an exporter that stopped serving; memcached_up says
		// whether memcached answers, so no readiness probe ties the two.
		LivenessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(podmonitor.PortName)}},
			PeriodSeconds:    20,
			TimeoutSeconds:   1,
			SuccessThreshold: 1,
			FailureThreshold: 3,
		},
		SecurityContext: podsecurity.ContainerContext(),
		Resources:       resources,
	}
}

// memoryLimit leaves room above the item memory for connection buffers,
// the hash table and the slab allocator's overhead, so that a full cache is
// not OOM-killed. The request equals it: a cache fills its memory and keeps
// it, so asking for less would only let the node overcommit.
var memoryLimit = resource.MustParse("128Mi")

// selectorLabels select the pods of m; they never change, since a
// Deployment's selector is immutable.
func selectorLabels(m *cachev1alpha1.Memcached) map[string]string {
	return ownership.SelectorLabels(appName, m.Name)
}

// Selector is selectorLabels serialized, for status.selector and so for the
// scale subresource.
func Selector(m *cachev1alpha1.Memcached) string {
	return labels.SelectorFromSet(selectorLabels(m)).String()
}

// port is m's container port. The API server defaults it, but an object
// that was never stored may still carry zero.
func port(m *cachev1alpha1.Memcached) int32 {
	if m.Spec.ContainerPort == 0 {
		return defaultPort
	}
	return m.Spec.ContainerPort
}

// Args is memcached's command line. Short options and their values are
// separate arguments: the tutorial's "-m=64" hands memcached the value "=64",
// which 1.4 tolerated but 1.6 reads as 0 MB and refuses to start with. UDP is off,
// as 1.6 has it by default, so that 1.4 images are no amplification vector.
func Args(m *cachev1alpha1.Memcached) []string {
	return []string{
		"-m", strconv.Itoa(cacheMegabytes),
		"-o", "modern",
		"-v",
		"-p", strconv.Itoa(int(port(m))),
		"-U", "0",
	}
}

// DesiredDeployment is the Deployment that runs m's servers with image,
// each beside an exporter of exporterImage unless m disables it, placed as
// spec.podTemplate says: its affinity or spread constraints replace the
// default anti-affinity.
func DesiredDeployment(m *cachev1alpha1.Memcached, image, exporterImage string) *appsv1.Deployment {
	podLabels := ownership.Labels(appName, m.Name)
	probe := func(period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(portName)}},
			PeriodSeconds:    period,
			TimeoutSeconds:   1,
			SuccessThreshold: 1,
			FailureThreshold: failures,
		}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      m.Name,
			Namespace: m.Namespace,
			Labels:    podLabels,
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(m.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(m)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              podsecurity.PodContext(runAsUser),
					// One server per node where possible, so that losing a
					// node loses one server's share of the keys, not all.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								LabelSelector: &metav1.LabelSelector{MatchLabels: selectorLabels(m)},
								TopologyKey:   corev1.LabelHostname,
							},
						}},
					}},
					Containers: []corev1.Container{{
						Name:            containerName,
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"memcached"},
						Args:            Args(m),
						Ports: []corev1.ContainerPort{{
							Name:          portName,
							ContainerPort: port(m),
							Protocol:      corev1.ProtocolTCP,
						}},
						// Readiness decides which servers the Service lists;
						// liveness restarts one that stopped accepting connections.
						ReadinessProbe:  probe(5, 3),
						LivenessProbe:   probe(10, 3),
						SecurityContext: podsecurity.ContainerContext(),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("50m"),
								corev1.ResourceMemory: memoryLimit,
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("500m"),
								corev1.ResourceMemory: memoryLimit,
							},
						},
					}},
				},
			},
		},
	}
	if exporter := exporterContainer(m, exporterImage); exporter != nil {
		dep.Spec.Template.Spec.Containers = append(dep.Spec.Template.Spec.Containers, *exporter)
	}
	placement.Apply(dep, &dep.Spec.Template, m.Spec.PodTemplate)
	return dep
}

// DesiredService is the headless Service that lists every ready server of
// m, so that clients, which shard keys across servers themselves, can reach
// each one rather than a load-balanced virtual IP.
func DesiredService(m *cachev1alpha1.Memcached) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      m.Name,
			Namespace: m.Namespace,
			Labels:    ownership.Labels(appName, m.Name),
		},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Selector:  selectorLabels(m),
			Ports: []corev1.ServicePort{{
				Name:       portName,
				Port:       port(m),
				TargetPort: intstr.FromString(portName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// DesiredPodMonitor is the PodMonitor that scrapes the exporters of m's
// servers, with spec.monitoring.podMonitor's interval and labels.
func DesiredPodMonitor(m *cachev1alpha1.Memcached) *unstructured.Unstructured {
	return podmonitor.Desired(podMonitorTarget(m))
}

// podMonitorTarget is what m's PodMonitor is built from.
func podMonitorTarget(m *cachev1alpha1.Memcached) podmonitor.Target {
	return podmonitor.TargetFor(appName, m.Namespace, m.Name, m.Spec.Monitoring)
}

// Package apis_test checks the admission bounds of every kind's schema
// (issue #40) against a real kube-apiserver with the generated CRDs: each
// refused spec is refused with a message that says what is allowed, and
// each boundary value is accepted.
package apis_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// The TDSet webhooks convert v1, so that a v1 write reaches its schema.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWith(m, testenv.RunOptions{Webhooks: tdset.SetupWebhooks},
		cachev1.AddToScheme, cachev1alpha1.AddToScheme, schedulev1.AddToScheme, schedulev2.AddToScheme, whalesayv1alpha1.AddToScheme))
}

// bound is one create and what the API server must answer.
type bound struct {
	name string
	obj  client.Object
	// refused is a substring of the error; empty when the create must pass.
	refused string
}

// expectBounds creates every row's object in a fresh namespace.
func expectBounds(t *testing.T, rows []bound) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			g := NewWithT(t)
			row.obj.SetNamespace(ns)
			if row.obj.GetName() == "" {
				row.obj.SetName(fmt.Sprintf("row-%d", i))
			}
			err := env.Client.Create(context.Background(), row.obj)
			if row.refused == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused by the schema, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(row.refused))
		})
	}
}

func redis(change func(*cachev1.RedisCluster)) *cachev1.RedisCluster {
	rc := builders.RedisCluster("", "").Size(1).Obj()
	change(rc)
	return rc
}

func redisNamed(name string) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) { rc.Name = name })
}

func redisSize(size, replicas int32) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) { rc.Spec.Size, rc.Spec.ReplicasPerMaster = size, replicas })
}

func redisConfig(key, value string) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) { rc.Spec.RedisConfig = map[string]string{key: value} })
}

func redisStorage(size string) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) {
		rc.Spec.Storage = &cachev1.StorageSpec{Size: resource.MustParse(size)}
	})
}

func redisResources(r corev1.ResourceRequirements) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) { rc.Spec.Resources = &r })
}

// redisPassword is the RedisCluster name whose password is in Secret secret.
func redisPassword(name, secret string) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) {
		rc.Name = name
		rc.Spec.Auth = &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: secret, Key: "password"}}
	})
}

// redisTLS is the RedisCluster name whose certificate is in Secret secret.
func redisTLS(name, secret string) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) {
		rc.Name = name
		rc.Spec.TLS = &cachev1.TLSSpec{SecretName: secret}
	})
}

const (
	ownPassword = "spec.auth.passwordSecret cannot name <metadata.name>-acl, <metadata.name>-operator or <metadata.name>-bus"
	ownTLS      = "spec.tls.secretName cannot name <metadata.name>-acl, <metadata.name>-operator, <metadata.name>-auth or <metadata.name>-bus"
)

const (
	tooLong       = "may not be more than"
	atMost1000    = "should be less than or equal to 1000"
	dns1035       = "start with a letter and end with a letter or digit"
	leadingDash   = "cannot start with '-', except a negative number"
	controlInConf = "must be one line without tabs or other control characters"
)

func TestRedisClusterBounds(t *testing.T) {
	nineResources := corev1.ResourceList{}
	for i := range 9 {
		nineResources[corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))] = resource.MustParse("1")
	}
	expectBounds(t, []bound{
		{name: "100 masters with 5 replicas each", obj: redisSize(100, 5)},
		{name: "101 masters", obj: redisSize(101, 0), refused: "should be less than or equal to 100"},
		{name: "a size that overflows the pod count", obj: redisSize(2000000000, 5), refused: "should be less than or equal to 100"},

		{name: "a DNS-1035 name", obj: redisNamed("my-redis-1")},
		{name: "a name of 52 characters", obj: redisNamed(strings.Repeat("r", 52))},
		{name: "a name of 53 characters", obj: redisNamed(strings.Repeat("r", 53)), refused: "at most 52 characters"},
		{name: "a name starting with a digit", obj: redisNamed("1abc"), refused: dns1035},
		{name: "a name with a dot", obj: redisNamed("a.b"), refused: dns1035},

		{name: "save with pairs", obj: redisConfig("save", "3600 1 300 100")},
		{name: "save off", obj: redisConfig("save", "")},
		{name: "a negative number", obj: redisConfig("list-max-listpack-size", "-2")},
		{name: "a size", obj: redisConfig("maxmemory", "100mb")},
		{name: "output buffer limits", obj: redisConfig("client-output-buffer-limit", "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60")},
		{name: "keyspace events of 128 characters", obj: redisConfig("notify-keyspace-events", strings.Repeat("E", 128))},
		{name: "keyspace events of 129 characters", obj: redisConfig("notify-keyspace-events", strings.Repeat("E", 129)), refused: tooLong + " 128"},
		{name: "an option smuggled into save", obj: redisConfig("save", "--enable-debug-command yes"), refused: leadingDash},
		{name: "stdin as the last argument", obj: redisConfig("loglevel", "-"), refused: leadingDash},
		{name: "a newline", obj: redisConfig("maxmemory-policy", "allkeys-lru\nenable-debug-command yes"), refused: controlInConf},
		{name: "a carriage return", obj: redisConfig("notify-keyspace-events", "Ex\r"), refused: controlInConf},
		{name: "a NUL", obj: redisConfig("save", "3600 1\x00"), refused: controlInConf},
		{name: "a word for a number", obj: redisConfig("maxclients", "lots"), refused: "take a whole number"},
		{name: "true for yes", obj: redisConfig("appendonly", "true"), refused: "take yes or no"},
		{name: "a size with a space", obj: redisConfig("maxmemory", "1 gb"), refused: "take a size in bytes"},
		{name: "an unknown policy", obj: redisConfig("maxmemory-policy", "lru"), refused: "maxmemory-policy must be one of"},
		{name: "an unknown fsync", obj: redisConfig("appendfsync", "sometimes"), refused: "appendfsync must be always, everysec or no"},
		{name: "an unknown log level", obj: redisConfig("loglevel", "loud"), refused: "loglevel must be debug"},
		{name: "save without changes", obj: redisConfig("save", "3600"), refused: "save takes pairs of seconds and changes"},
		{name: "a keyspace event class that does not exist", obj: redisConfig("notify-keyspace-events", "Ex;"), refused: "takes the class letters"},
		{name: "a buffer limit without seconds", obj: redisConfig("client-output-buffer-limit", "pubsub 32mb 8mb"), refused: "takes groups of class"},

		{name: "an image of 512 characters", obj: redis(func(rc *cachev1.RedisCluster) { rc.Spec.Image = strings.Repeat("i", 512) })},
		{name: "an image of 513 characters", obj: redis(func(rc *cachev1.RedisCluster) { rc.Spec.Image = strings.Repeat("i", 513) }), refused: tooLong + " 512"},
		{name: "storage of 1Gi", obj: redisStorage("1Gi")},
		{name: "storage of zero", obj: redisStorage("0"), refused: "spec.storage.size must be more than zero"},
		{name: "a storage class name of 254 characters", obj: redis(func(rc *cachev1.RedisCluster) {
			rc.Spec.Storage = &cachev1.StorageSpec{Size: resource.MustParse("1Gi"), StorageClassName: ptr.To(strings.Repeat("s", 254))}
		}), refused: tooLong + " 253"},
		{name: "requests of 9 resources", obj: redisResources(corev1.ResourceRequirements{Requests: nineResources}), refused: "may each name at most 8 resources"},
		{name: "a resource claim", obj: redisResources(corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}), refused: "spec.resources.claims is not supported"},

		// A cluster's own generated Secrets serve one role each; the
		// controller refuses other clusters' generated Secrets.
		{name: "a password in a Secret of one's own", obj: redisPassword("p1", "p1-password")},
		{name: "the password in its own generated <name>-auth", obj: redisPassword("p2", "p2-auth")},
		{name: "the password in its own <name>-acl", obj: redisPassword("p3", "p3-acl"), refused: ownPassword},
		{name: "the password in its own <name>-operator", obj: redisPassword("p4", "p4-operator"), refused: ownPassword},
		{name: "a certificate in a Secret of one's own", obj: redisTLS("t1", "t1-tls")},
		{name: "the certificate in its own <name>-auth", obj: redisTLS("t2", "t2-auth"), refused: ownTLS},
		{name: "the certificate in its own <name>-acl", obj: redisTLS("t3", "t3-acl"), refused: ownTLS},
		{name: "the certificate in its own <name>-operator", obj: redisTLS("t4", "t4-operator"), refused: ownTLS},
		{name: "the password in its own <name>-bus", obj: redisPassword("p5", "p5-bus"), refused: ownPassword},
		{name: "the certificate in its own <name>-bus", obj: redisTLS("t5", "t5-bus"), refused: ownTLS},
	})
}

func whaleSay(message, image string) *whalesayv1alpha1.WhaleSay {
	ws := builders.WhaleSay("", "").Message(message).Obj()
	ws.Spec.Image = image
	return ws
}

func TestWhaleSayBounds(t *testing.T) {
	const control = "spec.message cannot hold control characters"
	expectBounds(t, []bound{
		{name: "lines and tabs", obj: whaleSay("Hello\n\tfrom Kubernetes!", "")},
		{name: "1024 characters", obj: whaleSay(strings.Repeat("m", 1024), "")},
		{name: "a NUL", obj: whaleSay("hello\x00world", ""), refused: control},
		{name: "a terminal escape", obj: whaleSay("\x1b[2J\x1b[31mred", ""), refused: control},
		{name: "a carriage return", obj: whaleSay("hello\rbye", ""), refused: control},
		{name: "DEL", obj: whaleSay("hello\x7f", ""), refused: control},
		{name: "an image of 512 characters", obj: whaleSay("hi", strings.Repeat("i", 512))},
		{name: "an image of 513 characters", obj: whaleSay("hi", strings.Repeat("i", 513)), refused: tooLong + " 512"},
	})
}

func tdsetV2(change func(*schedulev2.TDSetSpec)) *schedulev2.TDSet {
	tds := builders.TDSet("", "").Obj()
	change(&tds.Spec)
	return tds
}

// hpaRef makes s scale the Deployment web through the HPA name.
func hpaRef(s *schedulev2.TDSetSpec, name string) {
	s.Container = schedulev2.ContainerSpec{}
	s.ScaleTargetRef = &schedulev2.ScaleTargetRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	s.Autoscaling = &schedulev2.Autoscaling{HPARef: &schedulev2.HPARef{Name: name}}
}

func tdsetV1(change func(*schedulev1.TDSetSpec)) *schedulev1.TDSet {
	tds := builders.TDSetV1("", "")
	change(&tds.Spec)
	return tds
}

// A v1 write is checked against v1's schema only: its bounds are v2's.
func TestTDSetBounds(t *testing.T) {
	until := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	expectBounds(t, []bound{
		{name: "v2 every count at 1000", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.DefaultReplicas, s.Windows[0].Replicas = 1000, 1000
			s.Exceptions = []schedulev2.Exception{{Date: "2099-12-25", Replicas: 1000}}
			s.Override = &schedulev2.Override{Replicas: 1000, Until: metav1.NewTime(until)}
			s.Autoscaling = &schedulev2.Autoscaling{MaxReplicas: 1000}
		})},
		{name: "v2 defaultReplicas", obj: tdsetV2(func(s *schedulev2.TDSetSpec) { s.DefaultReplicas = 1001 }), refused: atMost1000},
		{name: "v2 window", obj: tdsetV2(func(s *schedulev2.TDSetSpec) { s.Windows[0].Replicas = 1001 }), refused: atMost1000},
		{name: "v2 exception", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Exceptions = []schedulev2.Exception{{Date: "2099-12-25", Replicas: 1001}}
		}), refused: atMost1000},
		{name: "v2 override", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Override = &schedulev2.Override{Replicas: 1001, Until: metav1.NewTime(until)}
		}), refused: atMost1000},
		{name: "v2 maxReplicas", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Autoscaling = &schedulev2.Autoscaling{MaxReplicas: 1001}
		}), refused: atMost1000},
		// spec.autoscaling.hpaRef: an existing HPA, only with a scale target.
		{name: "v2 hpaRef with a scale target", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			hpaRef(s, strings.Repeat("h", 253))
		})},
		{name: "v2 hpaRef name over 253", obj: tdsetV2(func(s *schedulev2.TDSetSpec) { hpaRef(s, strings.Repeat("h", 254)) }), refused: tooLong + " 253"},
		{name: "v2 hpaRef with a count of 0", obj: tdsetV2(func(s *schedulev2.TDSetSpec) { hpaRef(s, "web"); s.DefaultReplicas = 0 }),
			refused: "with spec.autoscaling, every replica count (defaultReplicas, windows, exceptions, override) must be at least 1"},
		{name: "v2 hpaRef with a CPU target", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			hpaRef(s, "web")
			s.Autoscaling.TargetCPUUtilizationPercentage = ptr.To[int32](80)
		}), refused: schedulev2.MessageHPARefNoCPU},
		{name: "v2 hpaRef without a scale target", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Autoscaling = &schedulev2.Autoscaling{HPARef: &schedulev2.HPARef{Name: "web"}, MaxReplicas: 10}
		}), refused: schedulev2.MessageHPARefWithTarget},
		{name: "v2 autoscaling of a scale target without hpaRef", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			hpaRef(s, "web")
			s.Autoscaling = &schedulev2.Autoscaling{MaxReplicas: 10}
		}), refused: schedulev2.MessageHPARefWithTarget},
		{name: "v2 autoscaling of the TDSet's Deployment without maxReplicas", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Autoscaling = &schedulev2.Autoscaling{}
		}), refused: schedulev2.MessageMaxReplicasRequired},
		{name: "v2 image", obj: tdsetV2(func(s *schedulev2.TDSetSpec) { s.Container.Image = strings.Repeat("i", 513) }), refused: tooLong + " 512"},
		{name: "v2 window over days at 1000", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Windows = []schedulev2.Window{builders.WindowOver("Fri", "18:00", "Mon", "06:00", 1000)}
		})},
		{name: "v2 window over days over 1000", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Windows = []schedulev2.Window{builders.WindowOver("Fri", "18:00", "Mon", "06:00", 1001)}
		}), refused: atMost1000},
		{name: "v2 endDay not a weekday", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Windows = []schedulev2.Window{builders.WindowOver("Fri", "18:00", "Mo", "06:00", 1)}
		}), refused: `spec.windows[0].endDay: Unsupported value: "Mo"`},
		{name: "v2 endDay with every day", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Windows = []schedulev2.Window{{Start: "18:00", EndDay: "Mon", End: "06:00", Replicas: 1}}
		}), refused: "a window with endDay starts on one day"},
		{name: "v2 window over days of a whole week", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Windows = []schedulev2.Window{builders.WindowOver("Fri", "18:00", "Fri", "18:00", 1)}
		}), refused: "a window that ends on the day and at the time it starts is empty"},

		{name: "v1 every count at 1000", obj: tdsetV1(func(s *schedulev1.TDSetSpec) {
			s.DefaultReplica, s.SchedulingConfig[0].Replica = 1000, 1000
			s.Container.Image = strings.Repeat("i", 512)
		})},
		{name: "v1 defaultReplica", obj: tdsetV1(func(s *schedulev1.TDSetSpec) { s.DefaultReplica = 1001 }), refused: atMost1000},
		{name: "v1 window", obj: tdsetV1(func(s *schedulev1.TDSetSpec) { s.SchedulingConfig[0].Replica = 1001 }), refused: atMost1000},
		{name: "v1 image", obj: tdsetV1(func(s *schedulev1.TDSetSpec) { s.Container.Image = strings.Repeat("i", 513) }), refused: tooLong + " 512"},
	})
}

package whalesay

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// maxOutputBytes caps status.output.
const maxOutputBytes = 4096

// logTimeout bounds the log read: the API server proxies it to the node's
// kubelet, which may never answer (a simulated node, a network partition).
const logTimeout = 5 * time.Second

// logReader reads a finished Job's output through pods/log, which the
// controller-runtime client cannot do.
type logReader struct {
	core corev1client.CoreV1Interface
}

// output returns the log of the Job's succeeded pod, at most maxOutputBytes.
// It is best effort: any error is logged and gives an empty output.
func (l *logReader) output(ctx context.Context, namespace, jobName string) string {
	logger := log.FromContext(ctx).WithValues("job", jobName)
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	pods, err := l.core.Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: batchv1.JobNameLabel + "=" + jobName,
	})
	if err != nil {
		logger.Info("cannot list the Job's pods for its output", "error", err.Error())
		return ""
	}
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodSucceeded {
			continue
		}
		raw, err := l.core.Pods(namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container:  "whalesay",
			LimitBytes: new(int64(maxOutputBytes)),
		}).DoRaw(ctx)
		if err != nil {
			logger.Info("cannot read the Job's output", "pod", pod.Name, "error", err.Error())
			return ""
		}
		return string(raw)
	}
	return ""
}

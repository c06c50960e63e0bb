package backupreport

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrUnreadable marks a Job whose pods left no result, or one that does
// not decode: unlike an error of the API server, reading again cannot
// help.
var ErrUnreadable = errors.New("no readable result")

// FromJob reads a finished Job's result from the termination message of
// container in its pods: the latest that succeeded when succeeded, else
// the latest that failed. It lists at most maxPods pods, with reader,
// which should be the API server's: the Job's pods may not be cached.
//
// The termination message rather than the log: the kubelet keeps it in
// the pod's status, which the API server serves with the pod, so reading
// it needs no connection to the node, and the kubelet bounds it to
// MaxBytes. A result that cannot be had is ErrUnreadable.
func FromJob(ctx context.Context, reader client.Reader, job *batchv1.Job, container string, succeeded bool, maxPods int64) (*Result, error) {
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(job.Namespace),
		client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}, client.Limit(maxPods)); err != nil {
		return nil, fmt.Errorf("listing the Job's pods: %w", err)
	}
	var msg string
	var last time.Time
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !metav1.IsControlledBy(pod, job) {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			t := cs.State.Terminated
			if cs.Name != container || t == nil || (t.ExitCode == 0) != succeeded || (msg != "" && !t.FinishedAt.After(last)) {
				continue
			}
			msg, last = t.Message, t.FinishedAt.Time
		}
	}
	if msg == "" {
		return nil, fmt.Errorf("%w: no pod of the Job left a result", ErrUnreadable)
	}
	res, err := Decode([]byte(msg))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return &res, nil
}

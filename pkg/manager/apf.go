package manager

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
)

// FallbackKubeAPIQPS and FallbackKubeAPIBurst are the manager's client-side
// limit when the API server does not run API Priority and Fairness (or
// cannot be asked): nothing on the server would then keep a burst of new
// custom resources from crowding out other clients. With Priority and
// Fairness (on by default, GA since Kubernetes 1.29) the server shares its
// concurrency fairly and the manager sets no limit of its own.
const (
	FallbackKubeAPIQPS   = 10
	FallbackKubeAPIBurst = 5
)

// probeTimeout bounds the one request that asks the API server whether it
// runs Priority and Fairness, so that a server that does not answer
// delays the start by no more than that.
const probeTimeout = 10 * time.Second

// PriorityAndFairness reports whether the API server behind cfg classifies
// requests with API Priority and Fairness: it then names the FlowSchema it
// matched in every response's headers. It asks for /version, which every
// authenticated client may read; the filter runs before authorization, so
// even a refused answer carries the headers.
func PriorityAndFairness(ctx context.Context, cfg *rest.Config) (bool, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false, fmt.Errorf("asking the API server for Priority and Fairness: %w", err)
	}
	server, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return false, fmt.Errorf("asking the API server for Priority and Fairness: %w", err)
	}
	server.Path = path.Join(server.Path, "/version")
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.String(), nil)
	if err != nil {
		return false, fmt.Errorf("asking the API server for Priority and Fairness: %w", err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return false, fmt.Errorf("asking the API server for Priority and Fairness: %w", err)
	}
	_ = resp.Body.Close()
	return resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) != "" ||
		resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID) != "", nil
}

// ClientLimit is the manager's client-side limit on its requests to the
// API server, and why it was chosen.
type ClientLimit struct {
	// QPS is the requests per second; 0 sets no client-side limit.
	QPS float32
	// Burst is the requests allowed at once above QPS.
	Burst int
	// Reason says where the limit comes from, for the log.
	Reason string
}

// Reasons a ClientLimit was chosen.
const (
	LimitReasonFlags                    = "set by --kube-api-qps"
	LimitReasonPriorityAndFairness      = "the API server runs Priority and Fairness, which shares it fairly"
	LimitReasonNoPriorityAndFairness    = "the API server does not run Priority and Fairness"
	LimitReasonPriorityAndFairnessError = "could not ask the API server whether it runs Priority and Fairness"
)

// DefaultClientLimit is the limit when no flag sets one: none when the API
// server runs Priority and Fairness (as controller-runtime, Flux and
// cert-manager do), and FallbackKubeAPIQPS otherwise or when the server
// cannot be asked; the error then says why.
func DefaultClientLimit(ctx context.Context, cfg *rest.Config) (ClientLimit, error) {
	apf, err := PriorityAndFairness(ctx, cfg)
	switch {
	case err != nil:
		return ClientLimit{QPS: FallbackKubeAPIQPS, Burst: FallbackKubeAPIBurst, Reason: LimitReasonPriorityAndFairnessError}, err
	case apf:
		return ClientLimit{Reason: LimitReasonPriorityAndFairness}, nil
	default:
		return ClientLimit{QPS: FallbackKubeAPIQPS, Burst: FallbackKubeAPIBurst, Reason: LimitReasonNoPriorityAndFairness}, nil
	}
}

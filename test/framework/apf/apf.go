// Package apf tells how a real API server running API Priority and
// Fairness classified a user's request: the FlowSchema and the priority
// level it names in its response headers.
package apf

import (
	"context"
	"fmt"
	"net/http"
	"path"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
)

// Classify sends a GET of apiPath as cfg's user and returns the UIDs of the
// FlowSchema and the priority level that classified it. The API server
// classifies before it authorizes, so a refused request tells too; a
// server without API Priority and Fairness sends neither header.
func Classify(ctx context.Context, cfg *rest.Config, apiPath string) (flowSchemaUID, priorityLevelUID string, err error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", "", err
	}
	server, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return "", "", err
	}
	server.Path = path.Join(server.Path, apiPath)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.String(), nil)
	if err != nil {
		return "", "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("GET %s: %w", apiPath, err)
	}
	_ = resp.Body.Close()
	return resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID),
		resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID), nil
}

package v1

// Reasons of the events about a TDSet. The reasons of its conditions are
// beside the condition types in tdset_types.go.
const (
	// ReasonDeploymentCreated: the Deployment was created.
	ReasonDeploymentCreated = "DeploymentCreated"
	// ReasonDeploymentScaled: the Deployment's replica count was set to the schedule's.
	ReasonDeploymentScaled = "DeploymentScaled"
	// ReasonDeploymentUpdated: the Deployment's pod template was set to the TDSet's container.
	ReasonDeploymentUpdated = "DeploymentUpdated"
	// ReasonServiceCreated: the Service was created.
	ReasonServiceCreated = "ServiceCreated"
	// ReasonServiceUpdated: the Service was corrected to the TDSet's port.
	ReasonServiceUpdated = "ServiceUpdated"
	// ReasonServiceDeleted: the Service was deleted because spec.service.port is not set.
	ReasonServiceDeleted = "ServiceDeleted"
)

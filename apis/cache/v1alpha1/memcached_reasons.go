package v1alpha1

// Reasons of a Memcached's conditions.
const (
	// ReasonReplicasAvailable (Available=True): every server asked for is available.
	ReasonReplicasAvailable = "ReplicasAvailable"
	// ReasonReplicasUnavailable (Available=False): fewer servers are available than asked for.
	ReasonReplicasUnavailable = "ReplicasUnavailable"

	// ReasonSpecNotObserved (Progressing=True): the Deployment controller has not seen the latest spec.
	ReasonSpecNotObserved = "SpecNotObserved"
	// ReasonScalingUp (Progressing=True): servers are being created.
	ReasonScalingUp = "ScalingUp"
	// ReasonRollingOut (Progressing=True): servers are being replaced by ones of the current template.
	ReasonRollingOut = "RollingOut"
	// ReasonRemovingOldReplicas (Progressing=True): surplus servers are going.
	ReasonRemovingOldReplicas = "RemovingOldReplicas"
	// ReasonWaitingForAvailability (Progressing=True): every server is updated, not all are available.
	ReasonWaitingForAvailability = "WaitingForAvailability"
	// ReasonRolloutComplete (Progressing=False): every server is updated and available.
	ReasonRolloutComplete = "RolloutComplete"

	// ReasonProgressDeadlineExceeded (Degraded=True): the rollout passed its progress deadline.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure (Degraded=True): the Deployment controller cannot create pods.
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonFinalizing (Degraded=True): the Memcached is being deleted and its children go first.
	ReasonFinalizing = "Finalizing"
	// ReasonHealthy (Degraded=False): the Deployment reports no failure.
	ReasonHealthy = "Healthy"

	// ReasonReady (Ready=True). When Ready is False it takes the reason of
	// the condition that keeps the Memcached from being ready.
	ReasonReady = "Ready"
)

// Reasons of the events about a Memcached. A Deployment that turns
// degraded is reported with the Degraded condition's reason.
const (
	// ReasonChildrenCreated: the Deployment and the Service were created together.
	ReasonChildrenCreated = "ChildrenCreated"
	// ReasonDeploymentCreated: the Deployment was created.
	ReasonDeploymentCreated = "DeploymentCreated"
	// ReasonDeploymentScaled: the Deployment's replica count was changed to the spec's size.
	ReasonDeploymentScaled = "DeploymentScaled"
	// ReasonDeploymentUpdated: the Deployment was corrected to match the Memcached.
	ReasonDeploymentUpdated = "DeploymentUpdated"
	// ReasonDeploymentDeleted: the Deployment was deleted before the Memcached goes.
	ReasonDeploymentDeleted = "DeploymentDeleted"
	// ReasonServiceCreated: the headless Service was created.
	ReasonServiceCreated = "ServiceCreated"
	// ReasonServiceUpdated: the Service was corrected to match the Memcached.
	ReasonServiceUpdated = "ServiceUpdated"
	// ReasonServiceDeleted: the Service was deleted before the Memcached goes.
	ReasonServiceDeleted = "ServiceDeleted"
	// ReasonPodMonitorCreated: the PodMonitor of the exporters was created.
	ReasonPodMonitorCreated = "PodMonitorCreated"
	// ReasonPodMonitorUpdated: the PodMonitor was corrected to match the Memcached.
	ReasonPodMonitorUpdated = "PodMonitorUpdated"
	// ReasonPodMonitorDeleted: the PodMonitor was deleted, since the
	// Memcached no longer asks for one (monitoring.podMonitor.disabled or
	// monitoring.exporter.disabled).
	ReasonPodMonitorDeleted = "PodMonitorDeleted"
	// ReasonDeleting: the Memcached is being deleted.
	ReasonDeleting = "Deleting"
)

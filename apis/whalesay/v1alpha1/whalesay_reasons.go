package v1alpha1

// Reasons of a WhaleSay's conditions. While its Job has not finished, Ready
// and Failed are False with the phase (Pending, Running) as their reason.
const (
	// ReasonJobSucceeded (Ready=True, Failed=False): the Job printed the message.
	ReasonJobSucceeded = "JobSucceeded"
	// ReasonJobFailed (Ready=False): the Job failed; Failed=True carries the Job's own reason.
	ReasonJobFailed = "JobFailed"
)

// Reasons of the events about a WhaleSay, besides ReasonJobSucceeded and
// ReasonJobFailed when its Job finishes.
const (
	// ReasonJobCreated: the Job of the current spec was created.
	ReasonJobCreated = "JobCreated"
	// ReasonJobDeleted: the Job of an earlier spec was deleted.
	ReasonJobDeleted = "JobDeleted"
)

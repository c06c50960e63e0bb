//go:build tools

// Package tools pins SeaweedFS, whose weed binary serves the S3-compatible
// object store that the objectstore tests and make run write backups to. It
// is a module of its own, like redis_exporter's, so that SeaweedFS's many
// dependencies stay out of the project's go.mod.
package tools

import (
	_ "github.com/seaweedfs/seaweedfs/weed"
)

package backupjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DeleteConfig is what the cleanup of one backup needs: the backup's
// folder and where it is. No Redis is involved.
type DeleteConfig struct {
	// Path is the backup's folder: <namespace>/<cluster>/<backup>.
	Path string
	// Store is where the files are.
	Store
	// Timeout bounds the whole cleanup.
	Timeout time.Duration
}

// Args is c as the command line Bind reads, omitting what is unset.
func (c DeleteConfig) Args() []string {
	args := []string{"--" + flagPath + "=" + c.Path}
	args = append(args, c.Store.Args()...)
	if c.Timeout != 0 {
		args = append(args, "--"+flagTimeout+"="+c.Timeout.String())
	}
	return args
}

// Bind defines c's flags on fs.
func (c *DeleteConfig) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.Path, flagPath, "", "The backup's folder to remove, <namespace>/<cluster>/<backup>.")
	c.Store.Bind(fs)
	fs.DurationVar(&c.Timeout, flagTimeout, 10*time.Minute, "How long the whole cleanup may take.")
}

// Validate says what is missing or contradictory. The path must be a
// backup's folder, three names deep, so that no flag can make the cleanup
// remove a namespace's or a cluster's folder, or the prefix's whole.
func (c DeleteConfig) Validate() error {
	var errs []error
	if err := validFolder(c.Path); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Store.Validate())
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--%s must be above 0", flagTimeout))
	}
	return errors.Join(errs...)
}

// validFolder accepts <namespace>/<cluster>/<backup> only.
func validFolder(p string) error {
	parts := strings.Split(p, "/")
	if len(parts) != 3 {
		return fmt.Errorf("--%s %q is not <namespace>/<cluster>/<backup>", flagPath, p)
	}
	for _, part := range parts {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("--%s %q is not <namespace>/<cluster>/<backup>", flagPath, p)
		}
	}
	return nil
}

// ErrInvalid is wrapped by Delete's error when its input is wrong:
// retrying cannot help.
var ErrInvalid = errors.New("invalid cleanup")

// Delete removes every file of the backup's folder c.Path, and nothing
// outside it: not a sibling backup whose name starts the same. A folder
// that is already gone is not an error, so that a cleanup can be retried.
func Delete(ctx context.Context, c DeleteConfig) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	dest, closeDest, err := c.Open()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	defer closeDest()
	if err := dest.RemoveAll(ctx, c.Path); err != nil {
		return fmt.Errorf("removing %s: %w", c.Path, err)
	}
	return nil
}

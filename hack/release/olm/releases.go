package olm

import (
	"fmt"
	"os"
	"time"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// Release is one released version of the package.
type Release struct {
	// Version is the release's semantic version.
	Version semver.Version `json:"version"`
	// Date is the release date, YYYY-MM-DD: the CSV's createdAt.
	Date string `json:"date"`
	// Commit is the commit the release was made from, for the record.
	Commit string `json:"commit,omitempty"`
}

// CreatedAt is the release date in the form of the CSV's createdAt
// annotation, at midnight UTC.
func (r Release) CreatedAt() string { return r.Date + "T00:00:00Z" }

// Releases are the released versions, oldest first.
type Releases struct {
	// Releases are in increasing version order.
	Releases []Release `json:"releases"`
}

// LoadReleases reads and checks config/manifests/releases.yaml.
func LoadReleases(path string) (Releases, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Releases{}, err
	}
	var r Releases
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		return Releases{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.Check(); err != nil {
		return Releases{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Check fails unless the versions increase and every date is a date.
func (r Releases) Check() error {
	for i, rel := range r.Releases {
		if _, err := time.Parse(time.DateOnly, rel.Date); err != nil {
			return fmt.Errorf("release %s: date %q is not YYYY-MM-DD", rel.Version, rel.Date)
		}
		if i > 0 && !r.Releases[i-1].Version.LT(rel.Version) {
			return fmt.Errorf("release %s follows %s: versions must increase", rel.Version, r.Releases[i-1].Version)
		}
	}
	return nil
}

// Find returns the release of version.
func (r Releases) Find(version semver.Version) (Release, bool) {
	for _, rel := range r.Releases {
		if rel.Version.EQ(version) {
			return rel, true
		}
	}
	return Release{}, false
}

// Previous returns the release listed before version, the one its bundle
// replaces; false for the first release or a version not listed.
func (r Releases) Previous(version semver.Version) (Release, bool) {
	for i, rel := range r.Releases {
		if rel.Version.EQ(version) && i > 0 {
			return r.Releases[i-1], true
		}
	}
	return Release{}, false
}

package olm

import (
	"errors"
	"fmt"
	"slices"
)

// CheckChannel fails unless ch is a valid upgrade graph: entry names are
// unique, each replaces an entry of the channel, no entry is replaced
// twice, there is no cycle, and exactly one entry (the head) is replaced
// by none.
func CheckChannel(ch Channel) error {
	if len(ch.Entries) == 0 {
		return fmt.Errorf("channel %s has no entries", ch.Name)
	}
	names := map[string]bool{}
	for _, e := range ch.Entries {
		if names[e.Name] {
			return fmt.Errorf("channel %s lists %s twice", ch.Name, e.Name)
		}
		names[e.Name] = true
	}
	replacedBy := map[string]string{}
	for _, e := range ch.Entries {
		if e.Replaces == "" {
			continue
		}
		if !names[e.Replaces] {
			return fmt.Errorf("channel %s: %s replaces %s, which is not in the channel", ch.Name, e.Name, e.Replaces)
		}
		if other, dup := replacedBy[e.Replaces]; dup {
			return fmt.Errorf("channel %s: %s and %s both replace %s", ch.Name, other, e.Name, e.Replaces)
		}
		replacedBy[e.Replaces] = e.Name
	}
	if _, err := Head(ch); err != nil {
		return err
	}
	for _, e := range ch.Entries {
		if _, err := walk(ch, e.Name); err != nil {
			return err
		}
	}
	return nil
}

// Head is the channel's newest entry: the one no entry replaces. It fails
// unless there is exactly one.
func Head(ch Channel) (string, error) {
	replaced := map[string]bool{}
	for _, e := range ch.Entries {
		replaced[e.Replaces] = true
	}
	var heads []string
	for _, e := range ch.Entries {
		if !replaced[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	if len(heads) != 1 {
		return "", fmt.Errorf("channel %s has %d heads %v, not one", ch.Name, len(heads), heads)
	}
	return heads[0], nil
}

// walk follows replaces from name back to the channel's tail and returns
// the entries on the way, name first; it fails on a cycle.
func walk(ch Channel, name string) ([]string, error) {
	replaces := map[string]string{}
	for _, e := range ch.Entries {
		replaces[e.Name] = e.Replaces
	}
	var path []string
	for name != "" {
		if slices.Contains(path, name) {
			return nil, fmt.Errorf("channel %s: the replaces of %s lead back to it: %v", ch.Name, name, append(path, name))
		}
		path = append(path, name)
		name = replaces[name]
	}
	return path, nil
}

// UpgradePath is the sequence of upgrades OLM takes in ch from the
// installed bundle from to the head, from first; it fails when the head's
// replaces never reach from.
func UpgradePath(ch Channel, from string) ([]string, error) {
	head, err := Head(ch)
	if err != nil {
		return nil, err
	}
	back, err := walk(ch, head)
	if err != nil {
		return nil, err
	}
	i := slices.Index(back, from)
	if i < 0 {
		return nil, fmt.Errorf("channel %s: no upgrade path from %s to %s", ch.Name, from, head)
	}
	path := back[:i+1]
	slices.Reverse(path)
	return path, nil
}

// CheckCatalog fails unless the catalog is one valid package: its default
// channel exists, every channel is valid and lists only its bundles, and
// every bundle is in a channel with the version its name says.
func CheckCatalog(c Catalog) error {
	var errs []error
	if (c.Package.Name != PackageName && c.Package.Name != NamespacedPackageName) || c.Package.Schema != schemaPackage {
		errs = append(errs, fmt.Errorf("the catalog's package is %q, not %s or %s", c.Package.Name, PackageName, NamespacedPackageName))
	}
	bundles := map[string]bool{}
	for _, b := range c.Bundles {
		v, err := bundleVersion(b)
		switch {
		case err != nil:
			errs = append(errs, err)
		case b.Name != CSVNameIn(c.Package.Name, v.String()) || b.Package != c.Package.Name:
			errs = append(errs, fmt.Errorf("bundle %s has version %s", b.Name, v))
		}
		bundles[b.Name] = true
	}
	inChannel := map[string]bool{}
	defaultFound := false
	for _, ch := range c.Channels {
		defaultFound = defaultFound || ch.Name == c.Package.DefaultChannel
		if err := CheckChannel(ch); err != nil {
			errs = append(errs, err)
		}
		for _, e := range ch.Entries {
			if !bundles[e.Name] {
				errs = append(errs, fmt.Errorf("channel %s lists %s, which is no bundle of the catalog", ch.Name, e.Name))
			}
			inChannel[e.Name] = true
		}
	}
	if !defaultFound {
		errs = append(errs, fmt.Errorf("the default channel %q does not exist", c.Package.DefaultChannel))
	}
	for _, b := range c.Bundles {
		if !inChannel[b.Name] {
			errs = append(errs, fmt.Errorf("bundle %s is in no channel", b.Name))
		}
	}
	return errors.Join(errs...)
}

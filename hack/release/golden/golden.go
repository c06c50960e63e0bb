// Package golden compares generated files with the checked-in ones, so a
// test fails with the make target to run when a generated package is stale.
package golden

import (
	"os"
	"path/filepath"

	"github.com/onsi/gomega"
)

// ExpectTree fails unless the directories checkedIn and generated hold the
// same files with the same bytes; regenerate names the make target that
// writes checkedIn.
func ExpectTree(g gomega.Gomega, checkedIn, generated, regenerate string) {
	names := files(g, checkedIn)
	g.Expect(files(g, generated)).To(gomega.Equal(names), "the files of %s; run %s", checkedIn, regenerate)
	for _, n := range names {
		ExpectFile(g, filepath.Join(checkedIn, n), filepath.Join(generated, n), regenerate)
	}
}

// ExpectFile fails unless the files checkedIn and generated have the same bytes.
func ExpectFile(g gomega.Gomega, checkedIn, generated, regenerate string) {
	want, err := os.ReadFile(checkedIn)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	have, err := os.ReadFile(generated)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(string(have)).To(gomega.Equal(string(want)), "%s is stale: run %s", checkedIn, regenerate)
}

// files lists the files under dir, relative to it, in lexical order.
func files(g gomega.Gomega, dir string) []string {
	var out []string
	g.Expect(filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})).To(gomega.Succeed())
	return out
}

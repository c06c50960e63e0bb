package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
)

// ParseLdd returns the absolute paths of the shared objects in the output
// of `ldd FILE`: the libraries and the dynamic loader, without the kernel's
// vDSO, which no file backs. A statically linked file has none. A library
// ldd cannot find is an error, so an image never lacks one.
func ParseLdd(out string) ([]string, error) {
	var libs []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.Contains(line, "statically linked"), strings.Contains(line, "not a dynamic executable"):
			return nil, nil
		case strings.Contains(line, "=> not found"):
			return nil, fmt.Errorf("ldd: %s", line)
		}
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)",
		// "/lib64/ld-linux-x86-64.so.2 (0x...)" or "linux-vdso.so.1 (0x...)".
		if _, after, ok := strings.Cut(line, "=>"); ok {
			line = strings.TrimSpace(after)
		}
		file, _, _ := strings.Cut(line, " (")
		file = strings.TrimSpace(file)
		if !path.IsAbs(file) {
			if strings.HasPrefix(file, "linux-vdso") || strings.HasPrefix(file, "linux-gate") {
				continue
			}
			return nil, fmt.Errorf("ldd: unexpected line %q", line)
		}
		libs = append(libs, file)
	}
	return libs, nil
}

// SharedLibraries runs ldd on each file and returns every shared object
// they load, sorted and once each.
func SharedLibraries(ctx context.Context, files ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, f := range files {
		out, err := exec.CommandContext(ctx, "ldd", f).CombinedOutput()
		// ldd exits 1 for a static file; ParseLdd tells that case apart.
		if err != nil && !bytes.Contains(out, []byte("not a dynamic executable")) {
			return nil, fmt.Errorf("ldd %s: %w: %s", f, err, out)
		}
		libs, err := ParseLdd(string(out))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, l := range libs {
			seen[l] = true
		}
	}
	libs := make([]string, 0, len(seen))
	for l := range seen {
		libs = append(libs, l)
	}
	sort.Strings(libs)
	return libs, nil
}

// HostFiles copies each host file to the same path in the image.
func HostFiles(paths ...string) ([]File, error) {
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := HostFile(p, p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// HostTree copies every regular file under the host directory dir to the
// same paths in the image, owned by root.
func HostTree(dir string) ([]File, error) {
	var files []File
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		switch {
		case e.IsDir():
			sub, err := HostTree(p)
			if err != nil {
				return nil, err
			}
			files = append(files, sub...)
		case e.Type().IsRegular():
			f, err := HostFile(p, p)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// perlInventory is the Perl program that runs a script and then lists what
// it loaded, to the file named by $INVENTORY: "INC\t<file>" for every file
// in %INC (modules, and files run with do) and "SO\t<file>" for every XS
// shared object. The script's own output is discarded by the caller.
const perlInventory = `
END {
	open(my $f, ">", $ENV{INVENTORY}) or die "inventory: $!";
	print $f "INC\t$_\n" for values %INC;
	print $f "SO\t$_\n" for @DynaLoader::dl_shared_objects;
	close($f) or die "inventory: $!";
}
$0 = $ENV{SCRIPT_NAME};
do $ENV{SCRIPT};
die $@ if $@;
`

// ParsePerlInventory returns the files in the inventory perlInventory
// writes, sorted and once each: the Perl modules and XS objects a script
// loaded. A relative path is an error: the image needs the file where Perl
// found it.
func ParsePerlInventory(out string) ([]string, error) {
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		kind, file, ok := strings.Cut(line, "\t")
		if !ok || (kind != "INC" && kind != "SO") {
			return nil, fmt.Errorf("perl inventory: unexpected line %q", line)
		}
		if !path.IsAbs(file) {
			return nil, fmt.Errorf("perl inventory: %s was loaded from a relative path", file)
		}
		seen[path.Clean(file)] = true
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// PerlModules runs script under perl with args and the environment env and
// returns every file it loaded (see ParsePerlInventory). Run it the way the
// image runs it, so that modules loaded on demand (Encode under a UTF-8
// locale, say) are found too.
func PerlModules(ctx context.Context, perl, script, scriptName string, env, args []string) ([]string, error) {
	dir, err := os.MkdirTemp("", "perl-inventory-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) //nolint:errcheck // a temporary directory
	if _, err := os.Stat(script); err != nil {
		return nil, err
	}
	inventory := path.Join(dir, "inventory")
	cmd := exec.CommandContext(ctx, perl, append([]string{"-e", perlInventory, "--"}, args...)...)
	cmd.Env = append(append([]string{}, env...), "INVENTORY="+inventory, "SCRIPT="+script, "SCRIPT_NAME="+scriptName)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", perl, script, err, stderr.String())
	}
	out, err := os.ReadFile(inventory)
	if err != nil {
		return nil, err
	}
	return ParsePerlInventory(string(out))
}

package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// BuildInfo is set by the release build through ldflags (goreleaser.yaml); a `go install` build falls back
// to the module version and VCS data Go records.
type BuildInfo struct {
	Version, Commit, Date string
	dateIsCommit          bool // Date came from the VCS data: the commit's time, not the build's
}

func (b BuildInfo) resolved() BuildInfo { return b.Resolved() }

// Resolved is b with what the release build left empty taken from the module build info ("dev" last).
func (b BuildInfo) Resolved() BuildInfo {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.Date == "":
				b.Date, b.dateIsCommit = s.Value, true
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

func newVersionCmd(info BuildInfo, ios IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and build date",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			b := info.resolved()
			dateLabel := "built"
			if b.dateIsCommit {
				dateLabel = "commit date"
			}
			fmt.Fprintf(ios.Out, "agentbash %s\ncommit: %s\n%s: %s\ngo: %s %s/%s\n",
				b.Version, b.Commit, dateLabel, b.Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

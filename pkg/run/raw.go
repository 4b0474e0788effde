package run

import "github.com/agentbash/agentbash/pkg/raw"

// Raw is a string that crosses JSON byte for byte (a command, a path, an environment entry): [raw.String].
type Raw = raw.String

// RawList is a list of [Raw] strings (an environment, a wrapper's argv): [raw.List].
type RawList = raw.List

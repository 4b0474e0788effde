package rpc

import (
	"errors"
	"github.com/agentbash/agentbash/pkg/session"

	"github.com/agentbash/agentbash/pkg/run"
)

// ArtifactChunk is the data of an artifact response: bytes [Offset, Offset+len(Data)) of the artifact as
// `agentbash artifact` prints it (sanitized, or raw), and whether that is its end.
type ArtifactChunk struct {
	Offset int64   `json:"offset"`
	Data   run.Raw `json:"data"`
	EOF    bool    `json:"eof"`
}

// Removed is the data of a prune response: the ids removed.
type Removed struct {
	Removed []string `json:"removed"`
}

// store serves a request to the place's stores: tasks_prune, session_*, artifact*.
func (l *loop) store(c *call) {
	st, svc := c.m.Store, c.svc
	var data any
	var err error
	switch st.Op {
	case TypeTasksPrune:
		var ids []string
		ids, err = svc.PruneTasks(c.ctx, run.Seconds(st.OlderThan))
		data = Removed{Removed: nonNil(ids)}
	case TypeSessionList, TypeSessionShow, TypeSessionRemove:
		sessions, serr := svc.Sessions()
		if err = serr; err != nil {
			break
		}
		switch st.Op {
		case TypeSessionList:
			data, err = sessions.List(c.ctx)
		case TypeSessionShow:
			data, err = sessions.Show(c.ctx, st.Name, st.Values)
		default:
			err = sessions.Remove(c.ctx, st.Name, session.RemoveWait)
			data = struct{}{}
		}
	default:
		artifacts, aerr := svc.Artifacts()
		if err = aerr; err != nil {
			break
		}
		switch st.Op {
		case TypeArtifactList:
			data, err = artifacts.List(c.ctx)
		case TypeArtifactPrune:
			var ids []string
			ids, err = artifacts.Prune(c.ctx, run.Seconds(st.OlderThan))
			data = Removed{Removed: nonNil(ids)}
		case TypeArtifactPath:
			var p string
			p, err = artifacts.Path(c.ctx, st.ArtifactID)
			data = struct {
				Path string `json:"path"`
			}{p}
		default:
			limit := st.Limit
			if limit <= 0 || limit > MaxArtifactChunk {
				limit = MaxArtifactChunk
			}
			w := &window{skip: st.Offset, limit: limit}
			err = artifacts.Print(c.ctx, w, st.ArtifactID, st.Raw)
			if errors.Is(err, errWindowFull) {
				err = nil
			}
			data = ArtifactChunk{Offset: st.Offset, Data: run.Raw(w.buf), EOF: !w.full}
		}
	}
	if err != nil {
		l.send(Response{ID: c.m.ID, Type: TypeResponse, Command: c.m.Type, Error: err.Error()})
		return
	}
	l.send(Response{ID: c.m.ID, Type: TypeResponse, Command: c.m.Type, Success: true, Data: data})
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// errWindowFull stops a print once the window has what it wants.
var errWindowFull = errors.New("window full")

// window keeps bytes [skip, skip+limit) of what is written to it; past them it says errWindowFull (full).
type window struct {
	skip, limit int64
	buf         []byte
	full        bool
}

func (w *window) Write(p []byte) (int, error) {
	n := len(p)
	if w.skip >= int64(len(p)) {
		w.skip -= int64(len(p))
		return n, nil
	}
	p = p[w.skip:]
	w.skip = 0
	room := w.limit - int64(len(w.buf))
	if int64(len(p)) > room {
		w.buf = append(w.buf, p[:room]...)
		w.full = true
		return n, errWindowFull
	}
	w.buf = append(w.buf, p...)
	return n, nil
}

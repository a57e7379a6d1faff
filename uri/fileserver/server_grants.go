package fileserver

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// A grant is a fetch credential narrower than the server's token: it opens
// only the files it was issued for, only until its deadline, and only until
// it is revoked. The driver hands one to each executor launch, because an
// agent's fetcher writes every URI it fetches, query included, into the
// sandbox's stderr (and Mesos' fetcher into the file name and its cache):
// whatever credential a fetch URL carries is readable by anyone who can
// read sandboxes, so it must be worthless once the executor is up.
type grant struct {
	owner    string
	names    map[string]bool // "<sha256>/<basename>" keys of Server.files
	deadline time.Time
}

// Grant returns a fetch token for owner (an executor id) that opens exactly
// files, until Revoke(owner) or ttl from now, whichever comes first. While
// owner holds a live grant, Grant returns the same token with files added
// and the deadline moved to now+ttl if that is later: a launch that
// describes the same executor twice must describe it identically (Mesos
// refuses tasks whose ExecutorInfo differs from the running executor's).
// The token is as strong as NewToken's and, like the server token, never
// logged.
func (s *Server) Grant(owner string, ttl time.Duration, files ...FileURL) (string, error) {
	if owner == "" || ttl <= 0 || len(files) == 0 {
		return "", errors.New("uri: grant: needs an owner, a positive ttl and at least one file")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return "", ErrClosed
	}
	var names []string
	for _, f := range files {
		name, ok := s.nameOf(f)
		if !ok {
			return "", fmt.Errorf("uri: grant: %s is not published by this server", f.URL)
		}
		names = append(names, name)
	}
	now := s.now()
	s.expireLocked(now)
	token, g := s.owners[owner], (*grant)(nil)
	if token != "" {
		g = s.grants[sha256.Sum256([]byte(token))]
	}
	if g == nil {
		token = NewToken()
		g = &grant{owner: owner, names: map[string]bool{}}
		s.grants[sha256.Sum256([]byte(token))] = g
		s.owners[owner] = token
		s.log.WithField("owner", owner).Debug("fetch grant issued")
	}
	for _, n := range names {
		g.names[n] = true
	}
	if d := now.Add(ttl); d.After(g.deadline) {
		g.deadline = d
	}
	return token, nil
}

// Revoke ends owner's grant at once (the driver calls it when the executor
// has registered) and reports whether there was a live one.
func (s *Server) Revoke(owner string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	token, ok := s.owners[owner]
	if !ok {
		return false
	}
	delete(s.owners, owner)
	s.log.WithField("owner", owner).Debug("fetch grant revoked")
	sum := sha256.Sum256([]byte(token))
	g := s.grants[sum]
	delete(s.grants, sum)
	return g != nil && s.now().Before(g.deadline)
}

// Grants is the number of grants not yet revoked or expired.
func (s *Server) Grants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	return len(s.grants)
}

// granted reports whether token is a live grant for the served name. The
// grant is found by the token's SHA-256, so the lookup's timing says
// nothing about the token itself.
func (s *Server) granted(token, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.grants[sha256.Sum256([]byte(token))]
	return g != nil && g.names[name] && s.now().Before(g.deadline)
}

// expireLocked forgets grants past their deadline; s.mu must be held.
func (s *Server) expireLocked(now time.Time) {
	for sum, g := range s.grants {
		if !now.Before(g.deadline) {
			delete(s.grants, sum)
			delete(s.owners, g.owner)
		}
	}
}

// nameOf is the key of a published file in s.files; s.mu must be held.
func (s *Server) nameOf(f FileURL) (string, bool) {
	e := s.files[f.key]
	return f.key, e != nil && strings.HasPrefix(f.URL, s.base+"/files/")
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// Published returns the FileURL of a file this server publishes at
// fileURL (as AddFile returned it), for Grant; false for any other URL.
func (s *Server) Published(fileURL string) (FileURL, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest, ok := strings.CutPrefix(fileURL, s.base+"/files/")
	if !ok || s.base == "" {
		return FileURL{}, false
	}
	sum, esc, ok := strings.Cut(rest, "/")
	if !ok {
		return FileURL{}, false
	}
	base, err := url.PathUnescape(esc)
	if err != nil {
		return FileURL{}, false
	}
	e := s.files[sum+"/"+base]
	if e == nil {
		return FileURL{}, false
	}
	return s.fileURL(e), true
}

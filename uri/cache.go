package uri

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// cacheFilePrefix marks the files a Cache owns in its directory.
const cacheFilePrefix = "cache-"

// Cache is a size-bounded fetcher cache: downloaded content keyed by the
// URI (with leading whitespace trimmed), evicted least recently used first
// when a new entry needs room. Entries in use by a fetch are never evicted;
// content larger than the budget (or than what eviction can free) is used
// once and not kept. Concurrent fetches of the same URI share one download.
// Before use an entry is checked against its recorded size; a damaged or
// missing file is dropped and fetched again.
//
// A Cache owns the files named cache-* in its directory and removes any it
// finds at start (like Mesos, the cache does not survive a restart); use one
// Cache per directory. It is safe for concurrent use.
type Cache struct {
	dir string
	max int64

	mu      sync.Mutex
	entries map[string]*cacheEntry
	lru     *list.List // retained, complete entries; front = most recently used
	size    int64      // bytes of retained entries
	seq     uint64
}

type cacheEntry struct {
	key  string
	file string
	size int64
	done chan struct{} // closed when the fill ends; err and size are set then
	err  error
	refs int           // fetches using the file
	elem *list.Element // non-nil while retained
	gone bool          // the file has been removed
}

// NewCache returns a cache storing at most maxBytes in dir (created if
// missing).
func NewCache(dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("uri: cache size %d must be positive", maxBytes)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("uri: cache: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("uri: cache: %w", err)
	}
	des, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("uri: cache: %w", err)
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), cacheFilePrefix) && de.Type().IsRegular() {
			if err := os.Remove(filepath.Join(abs, de.Name())); err != nil {
				return nil, fmt.Errorf("uri: cache: %w", err)
			}
		}
	}
	return &Cache{dir: abs, max: maxBytes, entries: map[string]*cacheEntry{}, lru: list.New()}, nil
}

// Dir returns the cache directory.
func (c *Cache) Dir() string { return c.dir }

// MaxBytes returns the size budget.
func (c *Cache) MaxBytes() int64 { return c.max }

// Size returns the bytes held by retained entries.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// Len returns the number of retained entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Contains reports whether content for the URI value is retained.
func (c *Cache) Contains(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[strings.TrimLeft(uri, " \t\r\n\v\f")]
	return e != nil && e.elem != nil
}

// fillFunc writes an entry's content to f and returns its size.
type fillFunc func(ctx context.Context, f *os.File) (int64, error)

// get returns the entry for key pinned (release it), filling it on a miss.
// hit reports that this call did not fill it.
func (c *Cache) get(ctx context.Context, key string, fill fillFunc) (e *cacheEntry, hit bool, err error) {
	for {
		c.mu.Lock()
		e = c.entries[key]
		if e == nil {
			e = &cacheEntry{key: key, done: make(chan struct{})}
			c.entries[key] = e
			c.seq++
			e.file = filepath.Join(c.dir, fmt.Sprintf("%s%x-%d", cacheFilePrefix, sha256.Sum256([]byte(key)), c.seq))
			c.mu.Unlock()
			return e, false, c.fill(ctx, e, fill)
		}
		c.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if e.err != nil {
			if errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded) {
				continue // the filler gave up, not the source: try ourselves
			}
			return nil, false, e.err
		}
		c.mu.Lock()
		if !e.gone && c.verify(e) {
			e.refs++
			if e.elem != nil {
				c.lru.MoveToFront(e.elem)
			}
			c.mu.Unlock()
			return e, true, nil
		}
		c.drop(e)
		c.mu.Unlock()
	}
}

func (c *Cache) fill(ctx context.Context, e *cacheEntry, fill fillFunc) error {
	tmp := e.file + ".tmp"
	n, err := fillTemp(ctx, tmp, fill)
	if err == nil {
		err = os.Rename(tmp, e.file)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(e.done)
	if err != nil {
		_ = os.Remove(tmp)
		e.err, e.gone = err, true
		if c.entries[e.key] == e {
			delete(c.entries, e.key)
		}
		return err
	}
	e.size, e.refs = n, 1
	if c.makeRoom(n) {
		e.elem = c.lru.PushFront(e)
		c.size += n
	} else if c.entries[e.key] == e {
		delete(c.entries, e.key) // used once, removed at release
	}
	return nil
}

func fillTemp(ctx context.Context, name string, fill fillFunc) (int64, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := fill(ctx, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// makeRoom evicts unused entries, least recently used first, until n more
// bytes fit; it reports whether they do. Called with mu held.
func (c *Cache) makeRoom(n int64) bool {
	if n > c.max {
		return false
	}
	for el := c.lru.Back(); el != nil && c.size+n > c.max; {
		prev := el.Prev()
		if e := el.Value.(*cacheEntry); e.refs == 0 {
			c.drop(e)
		}
		el = prev
	}
	return c.size+n <= c.max
}

// verify checks the entry's file against its recorded size. mu held.
func (c *Cache) verify(e *cacheEntry) bool {
	fi, err := os.Stat(e.file)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == e.size
}

// drop forgets a complete entry; its file goes now or at the last release.
// mu held.
func (c *Cache) drop(e *cacheEntry) {
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
		c.size -= e.size
	}
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
	if e.refs == 0 && !e.gone {
		_ = os.Remove(e.file)
		e.gone = true
	}
}

func (c *Cache) release(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs == 0 && e.elem == nil && !e.gone {
		_ = os.Remove(e.file)
		e.gone = true
	}
}

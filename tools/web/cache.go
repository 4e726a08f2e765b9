package web

import (
	"context"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Cache keeps the web tools' fetched pages and search answers by key until
// they expire (the store's cache is one).
type Cache interface {
	// Get returns the value kept under key, and false when there is none or
	// it expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Put keeps value under key for ttl, replacing what was kept.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// CacheService is the key of the cache a tool context carries for the web
// tools; without one, nothing is cached.
var CacheService = tool.NewService[Cache]()

// cacheOf returns the cache of tc when results are kept for ttl, else nil.
func cacheOf(tc *tool.Context, ttl time.Duration) Cache {
	if ttl <= 0 {
		return nil
	}
	c, _ := CacheService.Get(tc)
	return c
}

package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// User is a person using the console.
type User struct {
	// Name is who they are: "owner" for the serve token's holder and the
	// loopback user without a token, else their token's principal. A
	// decision or an undo is recorded with it.
	Name string
	// Owner says they may approve, deny and undo; otherwise they only see.
	Owner bool
}

// Role names the user's role for people: "owner" or "viewer".
func (u User) Role() string {
	if u.Owner {
		return "owner"
	}
	return "viewer"
}

// Lifetimes of what logging in makes.
const (
	// sessionIdle ends a session that has not been used for that long.
	sessionIdle = 12 * time.Hour
	// linkLifetime is how long a one-time login link is valid.
	linkLifetime = 15 * time.Minute
)

// cookieName is the session cookie's name.
const cookieName = "toolbelt_console"

// auth knows who may use the console: its tokens, its sessions (in memory)
// and its one-time login links.
type auth struct {
	keys   []key
	owners []string
	open   bool // no token: loopback requests are the owner's

	mu       sync.Mutex
	sessions map[string]*session
	links    map[string]time.Time // one-time link → its expiry
}

// key is a token's hash and the user it logs in.
type key struct {
	sum  [32]byte
	user User
}

// session is a logged-in user's: their CSRF token, and when it was last
// used.
type session struct {
	user User
	csrf string
	used time.Time
}

func newAuth(o Options) *auth {
	a := &auth{owners: o.Owners, sessions: map[string]*session{}, links: map[string]time.Time{}}
	if o.Token != "" {
		a.keys = append(a.keys, key{sha256.Sum256([]byte(o.Token)), User{Name: "owner", Owner: true}})
	}
	for _, t := range o.Tokens {
		a.keys = append(a.keys, key{sha256.Sum256([]byte(t.Token)), User{Name: t.Principal, Owner: slices.Contains(o.Owners, t.Principal)}})
	}
	a.open = len(a.keys) == 0
	return a
}

// byToken returns the user a token logs in, comparing hashes in constant
// time against every token.
func (a *auth) byToken(token string) (User, bool) {
	if token == "" {
		return User{}, false
	}
	sum := sha256.Sum256([]byte(token))
	var found *User
	for i := range a.keys {
		if subtle.ConstantTimeCompare(sum[:], a.keys[i].sum[:]) == 1 && found == nil {
			found = &a.keys[i].user
		}
	}
	if found == nil {
		return User{}, false
	}
	return *found, true
}

// newSession starts a session for u and returns its id.
func (a *auth) newSession(u User) (id string, s *session) {
	id, s = rand.Text(), &session{user: u, csrf: rand.Text(), used: time.Now()}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, old := range a.sessions {
		if time.Since(old.used) > sessionIdle {
			delete(a.sessions, k)
		}
	}
	a.sessions[id] = s
	return id, s
}

// session returns the live session with this id.
func (a *auth) session(id string) (*session, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok || time.Since(s.used) > sessionIdle {
		delete(a.sessions, id)
		return nil, false
	}
	s.used = time.Now()
	return s, true
}

// endSession ends the session with this id.
func (a *auth) endSession(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, id)
}

// newLink makes a one-time login link's secret.
func (a *auth) newLink() string {
	secret := rand.Text()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.links[secret] = time.Now().Add(linkLifetime)
	return secret
}

// useLink spends a one-time link: true when it was valid.
func (a *auth) useLink(secret string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	expires, ok := a.links[secret]
	delete(a.links, secret)
	return ok && time.Now().Before(expires)
}

// visitor is who makes a request: the user, and the session the request
// belongs to (nil for a request with an Authorization header, which needs
// no CSRF token: a browser does not send it on its own).
type visitor struct {
	user    User
	session *session
}

// who returns who makes r, creating the loopback owner's session when no
// token is configured (setting its cookie on w); false when nobody is
// logged in.
func (a *auth) who(w http.ResponseWriter, r *http.Request) (visitor, bool) {
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		u, ok := a.byToken(bearer)
		return visitor{user: u}, ok
	}
	if c, err := r.Cookie(cookieName); err == nil {
		if s, ok := a.session(c.Value); ok {
			return visitor{s.user, s}, true
		}
	}
	if a.open && fromLoopback(r) {
		id, s := a.newSession(User{Name: "owner", Owner: true})
		setCookie(w, r, id)
		return visitor{s.user, s}, true
	}
	return visitor{}, false
}

// checkCSRF reports whether a state-changing request carries its session's
// CSRF token (the form field csrf, or the header X-CSRF-Token).
func (v visitor) checkCSRF(r *http.Request) bool {
	if v.session == nil {
		return true
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(v.session.csrf)) == 1
}

// setCookie sets the session cookie: HttpOnly, SameSite=Strict, Secure
// over TLS.
func setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// fromLoopback reports whether r came from this machine.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

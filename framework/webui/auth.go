package webui

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// cookieName holds the token after a visit with ?token=.
const cookieName = "flint_ui_token"

// TokenFor derives the UI's token from the application secret
// (flint.authenticate.secret): hex(HMAC-SHA256(secret, "flint-ui")). Like
// executors' tokens, it is derived so that the UI's credential never
// reveals the secret itself.
func TokenFor(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("flint-ui"))
	return hex.EncodeToString(m.Sum(nil))
}

// authorize wraps h so that every request must present token; an empty
// token lets everything through.
func authorize(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	ok := func(s string) bool {
		got := sha256.Sum256([]byte(s))
		return s != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("token"); q != "" && ok(q) {
			// Keep the token in an HttpOnly cookie and drop it from the
			// address bar (and from the Referer of any later link).
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/metrics" {
				u := *r.URL
				v := u.Query()
				v.Del("token")
				u.RawQuery = v.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		if b, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && ok(b) {
			h.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(cookieName); err == nil && ok(c.Value) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="flint-ui"`)
		http.Error(w, "webui: this Flint UI needs the application's token: open the sign-in link the driver wrote (see docs/ui.md), send \"Authorization: Bearer <token>\", or run with flint.ui.auth=false on a trusted network", http.StatusUnauthorized)
	})
}

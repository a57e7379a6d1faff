// Package fileserver is the driver's HTTP file server (Spark's file server
// for jars and files), apart from the fetcher (package uri) that downloads
// from it. AddFile and AddExecutable publish a file under
// /files/<sha256>/<name>; names are looked up in a table, never joined to
// the filesystem, and a file that changed after it was added is refused
// (409/410) rather than served with a stale hash. A token is required by
// default (a Bearer header, or a ?token= query for Mesos fetchers that
// cannot send headers; never logged); TokenHeader gives a uri.Fetcher the
// header for the server's own host only. Grant issues narrower tokens for
// fetch URLs, which agents write into sandboxes: each opens only the files
// it names, until its deadline or Revoke (the driver revokes an executor's
// grant when the executor registers). GET and HEAD with ranges and ETags
// are served by http.ServeContent.
//
// Handler exposes the server's http.Handler, so it can be mounted
// elsewhere or driven with net/http/httptest.
package fileserver

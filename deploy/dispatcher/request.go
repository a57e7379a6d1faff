package dispatcher

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesoslabel"
)

// Protocol messages, in the shape of Spark's REST submission protocol
// (org.apache.spark.deploy.rest): the same field names where they mean the same,
// Flint's where Spark's name a JVM notion (sparkProperties → flintProperties,
// clientSparkVersion → clientFlintVersion, serverSparkVersion →
// serverFlintVersion; mainClass has no equivalent: a Flint program has one main,
// and example names a bundled example of the flint binary).

// ErrBadRequest marks a malformed or invalid submission (HTTP 400).
var ErrBadRequest = errors.New("dispatcher: bad request")

// CreateRequest is the body of POST /v1/submissions/create
// (Spark's CreateSubmissionRequest).
type CreateRequest struct {
	Action               string            `json:"action"`      // "CreateSubmissionRequest"
	AppResource          string            `json:"appResource"` // sha256:<hex> (uploaded) or an http(s) URL
	AppResourceSHA256    string            `json:"appResourceSha256,omitempty"`
	AppResourceName      string            `json:"appResourceName,omitempty"` // the file name the program is fetched as
	Example              string            `json:"example,omitempty"`
	AppArgs              []string          `json:"appArgs"`
	FlintProperties      map[string]string `json:"flintProperties"`
	EnvironmentVariables map[string]string `json:"environmentVariables"`
	// Files are uploaded files (flint submit --files, Spark's --files) placed
	// in the driver's sandbox and added for its tasks (flint.files).
	Files              []FileRef `json:"files,omitempty"`
	ClientFlintVersion string    `json:"clientFlintVersion"`
}

// FileRef is a file uploaded with a submission: its content's SHA-256
// (sha256:<hex>, from /v1/binaries) and the name it has in the sandbox.
type FileRef struct {
	Resource string `json:"resource"`
	Name     string `json:"name"`
}

// CreateResponse answers a create (Spark's CreateSubmissionResponse).
type CreateResponse struct {
	Action             string `json:"action"` // "CreateSubmissionResponse"
	Message            string `json:"message,omitempty"`
	ServerFlintVersion string `json:"serverFlintVersion"`
	SubmissionID       string `json:"submissionId,omitempty"`
	Success            bool   `json:"success"`
}

// StatusResponse answers GET /v1/submissions/status/<id> (Spark's
// SubmissionStatusResponse; workerId/workerHostPort are the agent's).
type StatusResponse struct {
	Action             string   `json:"action"` // "SubmissionStatusResponse"
	DriverState        State    `json:"driverState,omitempty"`
	Message            string   `json:"message,omitempty"`
	ServerFlintVersion string   `json:"serverFlintVersion"`
	SubmissionID       string   `json:"submissionId"`
	Success            bool     `json:"success"`
	WorkerID           string   `json:"workerId,omitempty"`
	WorkerHostPort     string   `json:"workerHostPort,omitempty"`
	TaskID             string   `json:"taskId,omitempty"`
	Attempts           int      `json:"attempts,omitempty"`
	Driver             *Summary `json:"driver,omitempty"` // what was submitted, secrets redacted
}

// KillResponse answers POST /v1/submissions/kill/<id> (Spark's
// KillSubmissionResponse).
type KillResponse struct {
	Action             string `json:"action"` // "KillSubmissionResponse"
	Message            string `json:"message,omitempty"`
	ServerFlintVersion string `json:"serverFlintVersion"`
	SubmissionID       string `json:"submissionId"`
	Success            bool   `json:"success"`
}

// ErrorResponse is any failed request's body (Spark's ErrorResponse).
type ErrorResponse struct {
	Action             string `json:"action"` // "ErrorResponse"
	Message            string `json:"message"`
	ServerFlintVersion string `json:"serverFlintVersion"`
}

// Spec is a validated submission, as the dispatcher keeps and stores it.
type Spec struct {
	Resource      string            `json:"resource"`         // sha256:<hex> or an http(s) URL
	SHA256        string            `json:"sha256,omitempty"` // hex; the driver task checks the fetched program against it
	Name          string            `json:"name"`             // file name in the sandbox
	Example       string            `json:"example,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"` // non-secret flint.* settings for the driver
	Secrets       map[string]string `json:"secrets,omitempty"`    // secret settings, sealed (secrets.go)
	Env           map[string]string `json:"env,omitempty"`
	Files         []FileRef         `json:"files,omitempty"` // uploaded files for the sandbox and the tasks
	Supervise     bool              `json:"supervise,omitempty"`
	Cores         float64           `json:"cores"`
	MemMB         float64           `json:"memMB"`
	AppName       string            `json:"appName,omitempty"` // flint.app.name, for the page
	ClientVersion string            `json:"clientVersion,omitempty"`
}

// Summary is a Spec for display: secret values replaced by Redacted.
type Summary struct {
	Resource   string            `json:"appResource"`
	Example    string            `json:"example,omitempty"`
	Args       []string          `json:"appArgs,omitempty"`
	Properties map[string]string `json:"flintProperties,omitempty"`
	Env        map[string]string `json:"environmentVariables,omitempty"`
	Supervise  bool              `json:"supervise"`
	Cores      float64           `json:"driverCores"`
	MemMB      float64           `json:"driverMemoryMB"`
}

// Redacted stands for a secret value wherever a submission is shown.
const Redacted = "*********(redacted)"

// Summary returns s for display, secrets redacted.
func (s Spec) Summary() Summary {
	props := map[string]string{}
	for k, v := range s.Properties {
		props[k] = v
	}
	for k := range s.Secrets {
		props[k] = Redacted
	}
	return Summary{Resource: s.Resource, Example: s.Example, Args: s.Args, Properties: props, Env: s.Env,
		Supervise: s.Supervise, Cores: s.Cores, MemMB: s.MemMB}
}

// Driver resource defaults (Spark's spark.driver.cores and spark.driver.memory).
const (
	DefaultDriverCores = 1.0
	DefaultDriverMemMB = 1024.0
)

// dispatcherKeys are the flintProperties the dispatcher itself reads (Spark's
// spark.driver.supervise, spark.driver.cores, spark.driver.memory); they are not
// passed to the driver.
var dispatcherKeys = map[string]bool{"flint.driver.supervise": true, "flint.driver.cores": true, "flint.driver.memory": true}

// sparkFields are Spark's field names that Flint spells differently.
var sparkFields = map[string]string{
	"mainClass":          "a Flint program has one main; name a bundled example with \"example\"",
	"sparkProperties":    "use \"flintProperties\" with flint.* keys",
	"clientSparkVersion": "use \"clientFlintVersion\"",
}

var (
	shaRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	nameRE = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,128}$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// DecodeCreate reads a CreateRequest strictly: unknown fields, trailing data and
// a wrong action are errors (wrapping ErrBadRequest) naming the field.
func DecodeCreate(r io.Reader) (CreateRequest, error) {
	var req CreateRequest
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			name, _ := strconv.Unquote(f)
			msg = fmt.Sprintf("unknown field %s", f)
			if hint := sparkFields[name]; hint != "" {
				msg += " (" + hint + ")"
			}
		}
		return req, fmt.Errorf("%w: %s", ErrBadRequest, msg)
	}
	if dec.More() {
		return req, fmt.Errorf("%w: data after the JSON object", ErrBadRequest)
	}
	if req.Action != "CreateSubmissionRequest" {
		return req, fmt.Errorf("%w: action is %q, want \"CreateSubmissionRequest\"", ErrBadRequest, req.Action)
	}
	return req, nil
}

// Validate turns a request into a Spec: every problem is reported (errors.Join),
// each wrapping ErrBadRequest and naming the field. seal seals secret values.
func (req CreateRequest) Validate(seal func(string) (string, error)) (Spec, error) {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, a...)...))
	}
	s := Spec{Resource: req.AppResource, Example: req.Example, Args: req.AppArgs, ClientVersion: req.ClientFlintVersion,
		Cores: DefaultDriverCores, MemMB: DefaultDriverMemMB}
	switch {
	case req.AppResource == "":
		bad("appResource is empty: give sha256:<hex> of an uploaded binary or an http(s) URL")
	case strings.HasPrefix(req.AppResource, "sha256:"):
		s.SHA256 = strings.TrimPrefix(req.AppResource, "sha256:")
		if !shaRE.MatchString(s.SHA256) {
			bad("appResource %q: want sha256: and 64 lower-case hex digits", req.AppResource)
		}
		if req.AppResourceSHA256 != "" && req.AppResourceSHA256 != s.SHA256 {
			bad("appResourceSha256 differs from the uploaded binary's hash in appResource")
		}
	default:
		u, err := url.Parse(req.AppResource)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("appResource %q: want sha256:<hex> of an uploaded binary or an http(s) URL", req.AppResource)
		} else {
			s.Name = path.Base(u.Path)
		}
		if req.AppResourceSHA256 != "" && !shaRE.MatchString(req.AppResourceSHA256) {
			bad("appResourceSha256 %q: want 64 lower-case hex digits", req.AppResourceSHA256)
		}
		s.SHA256 = req.AppResourceSHA256
	}
	if req.AppResourceName != "" {
		s.Name = req.AppResourceName
	}
	if s.Name == "" {
		s.Name = "program"
	}
	if !nameRE.MatchString(s.Name) || s.Name == "." || s.Name == ".." {
		bad("appResourceName %q: want a plain file name (letters, digits, . _ + -)", s.Name)
	}
	if req.Example != "" && !nameRE.MatchString(req.Example) {
		bad("example %q is not a name", req.Example)
	}
	for k := range req.EnvironmentVariables {
		if !envRE.MatchString(k) {
			bad("environmentVariables: %q is not a variable name", k)
		} else if strings.HasPrefix(strings.ToUpper(k), "FLINT_") {
			bad("environmentVariables: %s: set Flint's settings in flintProperties", k)
		}
	}
	s.Env = req.EnvironmentVariables
	s.Files, errs = req.files(s.Name, errs)
	errs = append(errs, s.readProperties(req.FlintProperties, seal)...)
	return s, errors.Join(errs...)
}

// readProperties checks every property against Flint's keys, takes the
// dispatcher's own and seals the secret ones.
func (s *Spec) readProperties(props map[string]string, seal func(string) (string, error)) []error {
	var errs []error
	cfg := config.New()
	if re, ok := props["flint.redaction.regex"]; ok {
		if err := cfg.Set("flint.redaction.regex", re); err != nil {
			errs = append(errs, fmt.Errorf("%w: flintProperties: %w", ErrBadRequest, err))
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := props[k]
		if err := s.readProperty(cfg, k, v, seal); err != nil {
			errs = append(errs, fmt.Errorf("%w: flintProperties: %w", ErrBadRequest, err))
		}
	}
	return errs
}

func (s *Spec) readProperty(cfg *config.Config, k, v string, seal func(string) (string, error)) error {
	switch k {
	case "flint.driver.supervise":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: want true or false", k, v)
		}
		s.Supervise = b
		return nil
	case "flint.driver.cores":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1024 {
			return fmt.Errorf("%s=%q: want a positive number of cores", k, v)
		}
		s.Cores = f
		return nil
	case "flint.driver.memory":
		mb, err := parseMemMB(v)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", k, v, err)
		}
		s.MemMB = mb
		return nil
	case "flint.master":
		return fmt.Errorf("%s: the dispatcher sets the driver's master (its own)", k)
	}
	secret := cfg.IsSecretKey(k)
	if err := cfg.Set(k, v); err != nil {
		if secret { // never quote a secret value
			return fmt.Errorf("%s: invalid value or key", k)
		}
		return err
	}
	if k == "flint.app.name" {
		s.AppName = v
	}
	if err := checkLabels(k, v); err != nil {
		return err
	}
	if secret {
		sealed, err := seal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if s.Secrets == nil {
			s.Secrets = map[string]string{}
		}
		s.Secrets[k] = sealed
		return nil
	}
	if s.Properties == nil {
		s.Properties = map[string]string{}
	}
	s.Properties[k] = v
	return nil
}

// parseMemMB reads a memory size as Spark's spark.driver.memory does: a bare
// number is MiB; k, m, g, t suffixes (optionally with b) are KiB…TiB.
func parseMemMB(v string) (float64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	s = strings.TrimSuffix(s, "b")
	mult := 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k':
			mult, s = 1.0/1024, s[:n-1]
		case 'm':
			s = s[:n-1]
		case 'g':
			mult, s = 1024, s[:n-1]
		case 't':
			mult, s = 1024*1024, s[:n-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, errors.New("want a size such as 512m or 2g")
	}
	return f * mult, nil
}

// ValidSHA256 reports whether s is 64 lower-case hex digits.
func ValidSHA256(s string) bool { return shaRE.MatchString(s) }

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// encodeJSON marshals v without HTML escaping.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return buf.Bytes()
}

// files checks the uploaded files: each an uploaded content with a plain
// name, unique, neither the program's nor the launcher's.
func (req CreateRequest) files(program string, errs []error) ([]FileRef, []error) {
	seen := map[string]bool{program: true, LauncherName: true}
	for i, f := range req.Files {
		if sha, ok := strings.CutPrefix(f.Resource, "sha256:"); !ok || !shaRE.MatchString(sha) {
			errs = append(errs, fmt.Errorf("%w: files[%d].resource %q: want sha256: and 64 lower-case hex digits of an uploaded file", ErrBadRequest, i, f.Resource))
		}
		switch {
		case !nameRE.MatchString(f.Name) || f.Name == "." || f.Name == "..":
			errs = append(errs, fmt.Errorf("%w: files[%d].name %q: want a plain file name (letters, digits, . _ + -)", ErrBadRequest, i, f.Name))
		case seen[f.Name]:
			errs = append(errs, fmt.Errorf("%w: files[%d].name %q: the sandbox already has a file of that name (the program, the launcher or another file)", ErrBadRequest, i, f.Name))
		}
		seen[f.Name] = true
	}
	return req.Files, errs
}

// labelKeys are the properties in Spark's label syntax: the driver's
// (its Mesos task's labels, launch.go) and those its backend reads. A
// malformed one is refused at submission, not when the driver starts.
var labelKeys = map[string]bool{"flint.mesos.driver.labels": true, "flint.mesos.task.labels": true, "flint.mesos.network.labels": true}

// checkLabels checks a label property with the backends' parser; the
// driver's labels may not use the dispatcher's own key.
func checkLabels(k, v string) error {
	if !labelKeys[k] {
		return nil
	}
	labels, err := mesoslabel.Parse(v)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", k, v, err)
	}
	for _, l := range labels {
		if k == driverLabelsKey && l.Key == submissionLabel {
			return fmt.Errorf("%s=%q: label %s is the dispatcher's own (the submission id)", k, v, submissionLabel)
		}
	}
	return nil
}

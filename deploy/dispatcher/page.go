package dispatcher

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// PageConfig is what the HTML page links to.
type PageConfig struct {
	// Master returns the leading Mesos master's host:port, for each driver's
	// sandbox logs (a `flint mesos logs` command, and the master's UI).
	Master func() string
	// FrameworkID returns the dispatcher's framework id (the drivers' tasks
	// are its tasks), or "".
	FrameworkID func() string
	// HistoryURL links each launched driver's event log (a `flint history`
	// serving the flint.eventLog.dir the drivers write).
	HistoryURL string
	// DriverUIs returns each running driver's web UI URL by submission id
	// (the webui_url its framework registered with), or nil.
	DriverUIs func() map[string]string
}

type pageRow struct {
	Record
	Summary  Summary
	Since    string
	Logs     string // command printing the driver's stderr
	Sandbox  string // master UI link
	UI       string // the driver's web UI
	EventLog string // the driver's event log in the history server
	Resource string
}

type pageData struct {
	Queued, Launched, Finished []pageRow
	HistoryURL                 string
	Now                        string
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Flint dispatcher</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}code{font-size:90%}</style></head>
<body><h1>Flint dispatcher</h1><p>{{.Now}}{{if .HistoryURL}} · <a href="{{.HistoryURL}}">event logs (flint history)</a>{{end}}</p>
{{define "rows"}}<table><tr><th>Submission</th><th>Program</th><th>State</th><th>Since</th><th>Resources</th><th>Attempts</th><th>Agent</th><th>Message</th><th>Logs</th></tr>
{{range .}}<tr><td>{{.ID}}</td><td>{{.Resource}}{{if .Summary.Example}} --example {{.Summary.Example}}{{end}}{{range .Summary.Args}} {{.}}{{end}}</td>
<td>{{.State}}{{if .Killing}} (killing){{end}}</td><td>{{.Since}}</td><td>{{.Summary.Cores}} cpus, {{.Summary.MemMB}} MB{{if .Summary.Supervise}}, supervised{{end}}</td>
<td>{{.Attempts}}</td><td>{{.Host}}</td><td>{{.Message}}</td>
<td>{{if .UI}}<a href="{{.UI}}">driver UI</a> · {{end}}{{if .EventLog}}<a href="{{.EventLog}}">event log</a> · {{end}}{{if .Logs}}<code>{{.Logs}}</code>{{if .Sandbox}} · <a href="{{.Sandbox}}">sandbox</a>{{end}}{{end}}</td></tr>
{{else}}<tr><td colspan="9">none</td></tr>{{end}}</table>{{end}}
<h2>Queued drivers</h2>{{template "rows" .Queued}}
<h2>Launched drivers</h2>{{template "rows" .Launched}}
<h2>Finished drivers</h2>{{template "rows" .Finished}}
</body></html>
`))

func servePage(w http.ResponseWriter, recs []Record, cfg PageConfig) {
	var d pageData
	d.HistoryURL, d.Now = cfg.HistoryURL, time.Now().UTC().Format(time.RFC3339)
	fw, master := "", ""
	if cfg.FrameworkID != nil {
		fw = cfg.FrameworkID()
	}
	if cfg.Master != nil {
		master = cfg.Master()
	}
	var uis map[string]string
	if cfg.DriverUIs != nil {
		uis = cfg.DriverUIs()
	}
	for _, r := range recs {
		row := pageRow{Record: r, Summary: r.Spec.Summary(), Resource: r.Spec.Resource, UI: uis[r.ID]}
		if strings.HasPrefix(row.Resource, "sha256:") {
			row.Resource = r.Spec.Name + " (" + r.Spec.Resource[:19] + "…)"
		}
		since := r.Submitted
		switch {
		case r.State.Terminal():
			since = r.Ended
		case r.State.Active():
			since = r.Started
		}
		row.Since = since.UTC().Format(time.RFC3339)
		if r.TaskID != "" && cfg.HistoryURL != "" {
			row.EventLog = strings.TrimSuffix(cfg.HistoryURL, "/") + "/history/" + url.PathEscape(r.appID()) + "/jobs/"
		}
		if r.TaskID != "" && master != "" && fw != "" {
			row.Logs = "flint mesos logs --master " + master + " --framework " + fw + " --stderr " + r.TaskID
			row.Sandbox = "http://" + master + "/#/agents/" + r.AgentID + "/frameworks/" + fw + "/executors/" + r.TaskID
		}
		switch {
		case r.State.Terminal():
			d.Finished = append(d.Finished, row)
		case r.State.Active():
			d.Launched = append(d.Launched, row)
		default:
			d.Queued = append(d.Queued, row)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pageTmpl.Execute(w, d)
}

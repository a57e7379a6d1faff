package webui

import (
	_ "embed"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/flint-mesos/flint/framework/uistore"
)

//go:embed style.css
var styleCSS string

const layout = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{{if .Live}}<meta http-equiv="refresh" content="{{.RefreshSeconds}}">{{end}}
<title>{{.Title}} · {{.AppName}}</title>
<style>{{.Style}}</style></head>
<body data-page="{{.Page}}">
<header><span class="brand">{{.Brand}}</span>
<nav>{{if .History}}<a href="/">Applications</a>{{end}}{{if .Base}}<a href="{{.Base}}jobs/" class="{{if eq .Page "jobs"}}on{{end}}">Jobs</a><a href="{{.Base}}stages/" class="{{if eq .Page "stages"}}on{{end}}">Stages</a><a href="{{.Base}}executors/" class="{{if eq .Page "executors"}}on{{end}}">Executors</a><a href="{{.Base}}environment/" class="{{if eq .Page "environment"}}on{{end}}">Environment</a>{{end}}</nav>
<span class="app">{{.AppName}}{{if .AppID}} <span class="muted">{{.AppID}}</span>{{end}}{{if .Live}} · live{{end}}</span></header>
<main>{{range .Warnings}}<div class="warn" role="alert">{{.}}</div>{{end}}{{template "content" .}}</main></body></html>`

const progressBar = `{{define "bar"}}<div class="bar" title="{{.Done}} of {{.Total}} done, {{.Running}} running{{if .Failed}}, {{.Failed}} failed{{end}}"><span class="done" style="width:{{pct .Done .Total}}%"></span><span class="running" style="left:{{pct .Done .Total}}%;width:{{pct .Running .Total}}%"></span><label>{{.Done}}/{{.Total}}{{if .Running}} ({{.Running}} running){{end}}{{if .Failed}} ({{.Failed}} failed){{end}}</label></div>{{end}}`

const dagSVG = `{{define "dag"}}{{if .Nodes}}<svg class="dag" role="img" aria-label="stage DAG" width="{{.Width}}" height="{{.Height}}" xmlns="http://www.w3.org/2000/svg">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>
{{range .Edges}}<line x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}" marker-end="url(#arrow)" data-from="{{.From}}" data-to="{{.To}}"/>{{end}}
{{range .Nodes}}<a href="{{.Link}}"><g class="stage-node {{.Status}}{{if .Current}} current{{end}}" data-stage="{{.ID}}"><rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"/><text x="{{.TX}}" y="{{.TY1}}">Stage {{.ID}}</text><text x="{{.TX}}" y="{{.TY2}}" class="muted">{{.Label}}</text></g></a>{{end}}
</svg>{{end}}{{end}}`

var pageTemplates = map[string]string{
	"apps": `{{define "content"}}<h1>Applications</h1>
<table id="apps"><thead><tr><th>App ID</th><th>Name</th><th>Started</th><th>Completed</th><th class="num">Duration</th><th>User</th><th>Status</th></tr></thead><tbody>
{{range .Data}}<tr><td><a href="/history/{{.ID}}/jobs/">{{.ID}}</a></td><td>{{.Name}}</td><td>{{fmtTime .Start}}</td><td>{{if .Completed}}{{fmtTime .End}}{{end}}</td><td class="num">{{fmtDur .Duration}}</td><td>{{.User}}</td><td class="status">{{if .Completed}}completed{{else}}in progress{{end}}</td></tr>
{{else}}<tr><td colspan="7" class="muted">No event logs in this directory.</td></tr>{{end}}</tbody></table>{{end}}`,

	"jobs": `{{define "content"}}<h1>Jobs</h1>
<dl class="summary"><dt>User</dt><dd>{{.Data.App.User}}</dd><dt>Started</dt><dd>{{fmtTime .Data.App.Start}}</dd><dt>Master</dt><dd>{{.Data.App.Master}}</dd><dt>Flint</dt><dd>{{.Data.App.Version}}</dd></dl>
<table id="jobs"><thead><tr><th>Job ID</th><th>Description</th><th>Status</th><th>Submitted</th><th class="num">Duration</th><th>Stages: succeeded/total</th><th>Tasks: succeeded/total</th></tr></thead><tbody>
{{range .Data.Jobs}}<tr data-job="{{.JobID}}"><td>{{.JobID}}</td><td><a href="{{$.Base}}jobs/job/?id={{.JobID}}">{{.Name}}</a>{{if .FailureReason}}<div class="err">{{.FailureReason}}</div>{{end}}</td><td class="status {{.Status}}">{{.Status}}</td><td>{{fmtDate .SubmissionTime}}</td><td class="num">{{jobDur . $.Now}}</td><td>{{.NumCompletedStages}}/{{len .StageIDs}}{{if .NumFailedStages}} ({{.NumFailedStages}} failed){{end}}{{if .NumSkippedStages}} ({{.NumSkippedStages}} skipped){{end}}</td><td>{{template "bar" (jobBar .)}}</td></tr>
{{else}}<tr><td colspan="7" class="muted">No jobs yet.</td></tr>{{end}}</tbody></table>{{end}}`,

	"job": `{{define "content"}}<h1>Job {{.Data.Job.JobID}}: {{.Data.Job.Name}}</h1>
<dl class="summary"><dt>Status</dt><dd class="status {{.Data.Job.Status}}">{{.Data.Job.Status}}</dd><dt>Submitted</dt><dd>{{fmtDate .Data.Job.SubmissionTime}}</dd><dt>Duration</dt><dd>{{jobDur .Data.Job .Now}}</dd>{{if .Data.Job.FailureReason}}<dt>Failure</dt><dd class="err">{{.Data.Job.FailureReason}}</dd>{{end}}</dl>
<h2>DAG</h2>{{template "dag" .Data.DAG}}
<h2>Stages</h2>{{template "stagetable" .}}{{end}}`,

	"stages": `{{define "content"}}<h1>Stages</h1>{{template "stagetable" .}}{{end}}`,

	"stage": `{{define "content"}}{{with .Data.Stage}}<h1>Stage {{.StageID}} (attempt {{.AttemptID}}): {{.Name}}</h1>
<dl class="summary"><dt>Status</dt><dd class="status {{.Status}}">{{.Status}}</dd><dt>Job</dt><dd><a href="{{$.Base}}jobs/job/?id={{.JobID}}">{{.JobID}}</a></dd><dt>Tasks</dt><dd>{{template "bar" (stageBar .)}}</dd><dt>Total run time</dt><dd>{{fmtMillis .ExecutorRunTime}}</dd><dt>Result size</dt><dd>{{fmtBytes .ResultSize}}</dd><dt>Input</dt><dd>{{fmtBytes .InputBytes}}</dd><dt>Shuffle read / write</dt><dd>{{fmtBytes .ShuffleReadBytes}} / {{fmtBytes .ShuffleWriteBytes}}</dd>{{if .FailureReason}}<dt>Failure</dt><dd class="err">{{.FailureReason}}</dd>{{end}}</dl>{{end}}
<h2>DAG</h2>{{template "dag" .Data.DAG}}
{{with .Data.PendingSummary}}<h2>Pending tasks: why not placed</h2><p id="pending-summary">{{.}}</p>{{end}}{{if .Data.Pending}}<h2>Pending tasks: why not placed</h2><table id="pending"><thead><tr><th>Index</th><th>Reason</th><th>Detail</th></tr></thead><tbody>
{{range .Data.Pending}}<tr data-index="{{.Index}}"><td>{{.Index}}</td><td class="reason">{{.Reason}}</td><td>{{.Detail}}</td></tr>{{end}}{{if .Data.PendingMore}}<tr><td colspan="3" class="muted">{{.Data.PendingMore}} more pending tasks not shown.</td></tr>{{end}}</tbody></table>{{end}}
{{if .Data.Summary}}<h2>Summary metrics for {{.Data.Succeeded}} succeeded tasks</h2>
<table id="summary"><thead><tr><th>Metric</th><th class="num">Min</th><th class="num">25th percentile</th><th class="num">Median</th><th class="num">75th percentile</th><th class="num">Max</th></tr></thead><tbody>
{{range .Data.Summary}}<tr><th>{{.Metric}}</th>{{range .Values}}<td class="num">{{.}}</td>{{end}}</tr>{{end}}</tbody></table>{{end}}
<h2>Tasks ({{len .Data.Tasks}})</h2>
<table id="tasks"><thead><tr><th class="num">Index</th><th class="num">Task ID</th><th class="num">Attempt</th><th>Status</th><th>Executor</th><th>Host</th><th>Locality</th><th>Launched</th><th class="num">Duration</th><th class="num">Run time</th><th class="num">Result size</th><th class="num">Shuffle read / write</th><th>Error</th></tr></thead><tbody>
{{range .Data.Tasks}}<tr data-task="{{.TaskID}}"><td class="num">{{.Index}}</td><td class="num">{{.TaskID}}</td><td class="num">{{.Attempt}}</td><td class="status {{.Status}}">{{.Status}}</td><td><a href="{{$.Base}}executors/#exec-{{.ExecutorID}}">{{.ExecutorID}}</a></td><td>{{.Host}}</td><td>{{.TaskLocality}}</td><td>{{fmtTime .LaunchTime.Time}}</td><td class="num">{{if .Duration}}{{fmtMillis (deref .Duration)}}{{end}}</td><td class="num">{{with .TaskMetrics}}{{fmtMillis .ExecutorRunTime}}{{end}}</td><td class="num">{{with .TaskMetrics}}{{fmtBytes .ResultSize}}{{end}}</td><td class="num">{{with .TaskMetrics}}{{fmtBytes .ShuffleReadMetrics.RemoteBytesRead}} / {{fmtBytes .ShuffleWriteMetrics.BytesWritten}}{{end}}</td><td>{{if .ErrorMessage}}<div class="err">{{errHead .ErrorMessage}}{{with errRest .ErrorMessage}}<details><summary>details</summary>{{.}}</details>{{end}}</div>{{end}}</td></tr>
{{else}}<tr><td colspan="13" class="muted">No task launched yet.</td></tr>{{end}}</tbody></table>{{end}}`,

	"executors": `{{define "content"}}<h1>Executors</h1>
<table id="executors"><thead><tr><th>Executor ID</th><th>Host</th><th>Status</th><th class="num">Cores</th><th class="num">Active tasks</th><th class="num">Failed tasks</th><th class="num">Completed tasks</th><th class="num">Task time</th><th class="num">Input</th><th class="num">Shuffle read / write</th><th>Logs</th></tr></thead><tbody>
{{range .Data.Executors}}<tr id="exec-{{.ID}}" data-executor="{{.ID}}"><td>{{.ID}}</td><td>{{.HostPort}}</td><td class="status">{{if .IsActive}}Active{{else}}Dead{{if .RemoveReason}}: {{.RemoveReason}}{{end}}{{end}}</td><td class="num">{{.TotalCores}}</td><td class="num">{{.ActiveTasks}}</td><td class="num">{{.FailedTasks}}</td><td class="num">{{.CompletedTasks}}</td><td class="num">{{fmtMillis .TotalDuration}}</td><td class="num">{{fmtBytes .TotalInputBytes}}</td><td class="num">{{fmtBytes .TotalShuffleRead}} / {{fmtBytes .TotalShuffleWrite}}</td><td class="logs">{{if $.Data.Logs}}<a href="{{$.Base}}executors/logs/?id={{.ID}}&amp;file=stdout">stdout</a> <a href="{{$.Base}}executors/logs/?id={{.ID}}&amp;file=stderr">stderr</a>{{else}}<span class="muted">no sandbox</span>{{end}}</td></tr>
{{else}}<tr><td colspan="11" class="muted">No executors yet.</td></tr>{{end}}</tbody></table>{{end}}`,

	"logs": `{{define "content"}}<h1>Executor {{.Data.ID}}: {{.Data.File}}</h1>
<p class="muted">{{.Data.Where}}{{if .Data.Truncated}} · last {{fmtBytes .Data.Shown}} of {{fmtBytes .Data.Size}}{{end}}</p>
<pre class="log" id="log">{{.Data.Text}}</pre>{{end}}`,

	"environment": `{{define "content"}}<h1>Environment</h1>
<h2>Runtime</h2><table id="runtime"><tbody>{{range $k, $v := .Data.Runtime}}<tr><th>{{$k}}</th><td>{{$v}}</td></tr>{{end}}</tbody></table>
<h2>Flint properties</h2><p class="muted">Secret values are redacted.</p><table id="properties"><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>{{range .Data.SparkProperties}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</tbody></table>{{end}}`,
}

const stageTable = `{{define "stagetable"}}<table id="stages"><thead><tr><th>Stage ID</th><th>Description</th><th>Status</th><th>Submitted</th><th class="num">Duration</th><th>Tasks: succeeded/total</th><th class="num">Result size</th><th class="num">Shuffle read</th><th class="num">Shuffle write</th><th>Failure reason</th></tr></thead><tbody>
{{range .Data.Stages}}<tr data-stage="{{.StageID}}"><td>{{.StageID}}{{if .AttemptID}} (retry {{.AttemptID}}){{end}}</td><td><a href="{{$.Base}}stages/stage/?id={{.StageID}}&amp;attempt={{.AttemptID}}">{{.Name}}</a></td><td class="status {{.Status}}">{{.Status}}</td><td>{{fmtDate .SubmissionTime}}</td><td class="num">{{stageDur . $.Now}}</td><td>{{template "bar" (stageBar .)}}</td><td class="num">{{fmtBytes .ResultSize}}</td><td class="num">{{fmtBytes .ShuffleReadBytes}}</td><td class="num">{{fmtBytes .ShuffleWriteBytes}}</td><td>{{if .FailureReason}}<div class="err">{{.FailureReason}}</div>{{end}}</td></tr>
{{else}}<tr><td colspan="10" class="muted">No stages.</td></tr>{{end}}</tbody></table>{{end}}`

type barData struct{ Done, Running, Failed, Total int }

var funcs = template.FuncMap{
	"pct": func(n, total int) string {
		if total <= 0 {
			return "0"
		}
		return fmt.Sprintf("%.1f", 100*float64(min(n, total))/float64(total))
	},
	"fmtTime": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"fmtDate": func(d *uistore.Date) string {
		if d == nil {
			return ""
		}
		return d.UTC().Format("2006-01-02 15:04:05")
	},
	"fmtDur":    fmtDur,
	"fmtMillis": func(ms int64) string { return fmtDur(time.Duration(ms) * time.Millisecond) },
	"fmtBytes":  fmtBytes,
	"deref":     func(p *int64) int64 { return *p },
	// errHead and errRest split an error message into its first line and
	// the rest (a panic's stack), shown folded as Spark's "+details"
	"errHead": func(s string) string { h, _, _ := strings.Cut(s, "\n"); return h },
	"errRest": func(s string) string { _, r, _ := strings.Cut(s, "\n"); return r },
	"jobDur": func(j uistore.JobData, now time.Time) string {
		return span(j.SubmissionTime, j.CompletionTime, now)
	},
	"stageDur": func(s uistore.StageData, now time.Time) string {
		return span(s.SubmissionTime, s.CompletionTime, now)
	},
	"jobBar": func(j uistore.JobData) barData {
		return barData{Done: j.NumCompletedIndices, Running: j.NumActiveTasks, Failed: j.NumFailedTasks, Total: j.NumTasks}
	},
	"stageBar": func(s uistore.StageData) barData {
		return barData{Done: s.NumCompletedIndices, Running: s.NumActiveTasks, Failed: s.NumFailedTasks, Total: s.NumTasks}
	},
}

func span(from, to *uistore.Date, now time.Time) string {
	if from == nil {
		return ""
	}
	end := now
	if to != nil {
		end = to.Time
	}
	return fmtDur(end.Sub(from.Time))
}

func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return ""
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.1f min", d.Minutes())
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}

func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// templates are parsed once: each page with the layout and shared parts.
var templates = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for name, body := range pageTemplates {
		t := template.Must(template.New("layout").Funcs(funcs).Parse(layout))
		template.Must(t.Parse(progressBar))
		template.Must(t.Parse(dagSVG))
		template.Must(t.Parse(stageTable))
		out[name] = template.Must(t.Parse(body))
	}
	return out
}()

package framework

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// TaskReason says why a task is, or is not yet, running (Explanation.Reason).
type TaskReason int

// Task reasons.
const (
	TaskUnknown      TaskReason = iota // no such active stage or task
	TaskSucceeded                      // the task succeeded
	TaskRunning                        // an attempt is running
	TaskZombie                         // its stage attempt finished or was aborted
	TaskNoOffers                       // no resource offer was ever received
	TaskNoOfferFits                    // no offer had flint.task.cpus free cores
	TaskExcluded                       // excluded on every known executor
	TaskLocalityWait                   // delay scheduling waits for a preferred place
	TaskOffersUsedUp                   // offers were used up before its turn in pool order
	TaskPending                        // nothing blocks it: it waits for the next offer
)

var taskReasonNames = [...]string{"UNKNOWN", "SUCCEEDED", "RUNNING", "ZOMBIE", "NO_OFFERS", "NO_OFFER_FITS",
	"EXCLUDED", "LOCALITY_WAIT", "OFFERS_USED_UP", "PENDING"}

func (r TaskReason) String() string {
	if r >= 0 && int(r) < len(taskReasonNames) {
		return taskReasonNames[r]
	}
	return fmt.Sprintf("TaskReason(%d)", int(r))
}

// Explanation says why a task is where it is: the scheduler's reason, and
// for a task still waiting, what placement made of the offers a Mesos
// backend last saw and did not (fully) use.
type Explanation struct {
	Reason TaskReason
	Detail string // the reason in words
	// For TaskLocalityWait: the locality level allowed now (PROCESS_LOCAL,
	// NODE_LOCAL, NO_PREF, RACK_LOCAL or ANY), the preferred places
	// (hosts, or executor@host) and how long delay scheduling waits yet.
	Allowed   string
	Preferred []string
	WaitLeft  time.Duration
	// For TaskNoOfferFits: the most cores one offer had in the last round.
	LargestOffer int
	Offers       []OfferFilter
	// SlotsBusy: the task only waits for a busy slot (every executor's
	// free cores are fewer than flint.task.cpus); Slots is how many tasks
	// the executors run at once. Offers then explain nothing.
	SlotsBusy bool
	Slots     int
}

// OfferFilter is what placement made of one offer for the waiting tasks.
type OfferFilter struct {
	OfferID, AgentID, Host string
	Reason                 string // placement's reason, e.g. "mem short", "constraint unmet", "used"
	Detail                 string // the shortfall or cause in words
	Unfit                  bool   // the offer cannot hold the work at all (not merely unwanted now or held back)
}

// Explain says why task index of an active stage is not running yet.
func (c *Context) Explain(stageID, index int) (Explanation, error) {
	e, offers, busy, slots, err := c.explain(stageID, index)
	if err != nil {
		return Explanation{}, err
	}
	x := Explanation{Reason: taskReasons[e.Reason], Detail: e.Detail, Preferred: e.Preferred, WaitLeft: e.WaitLeft,
		LargestOffer: e.LargestOffer, SlotsBusy: busy, Slots: slots}
	if e.Reason == scheduler.ReasonLocalityWait {
		x.Allowed = e.Allowed.String()
	}
	for _, f := range offers {
		x.Offers = append(x.Offers, OfferFilter{OfferID: f.OfferID, AgentID: f.AgentID, Host: f.Host,
			Reason: f.Reason.String(), Detail: f.Detail, Unfit: f.Reason.Unfit()})
	}
	return x, nil
}

// explain is the scheduler's explanation of a task, the offer filters
// that explain a waiting one, and whether it only waits for a busy slot
// (then with no offers: they explain nothing).
func (c *Context) explain(stageID, index int) (e scheduler.Explanation, offers []placement.Filtered, busy bool, slots int, err error) {
	e, busy, slots, err = c.driver.Explain(stageID, index)
	if err != nil {
		return e, nil, false, 0, err
	}
	switch e.Reason {
	case scheduler.ReasonSucceeded, scheduler.ReasonRunning, scheduler.ReasonZombie:
		return e, nil, false, slots, nil
	case scheduler.ReasonNoOfferFits, scheduler.ReasonOffersUsedUp, scheduler.ReasonPending:
		if busy {
			return e, nil, true, slots, nil
		}
	}
	if oe, ok := backend.As[backend.OfferExplainer](c.backend); ok {
		offers = oe.OfferFilters()
	}
	return e, offers, false, slots, nil
}

var taskReasons = map[scheduler.Reason]TaskReason{
	scheduler.ReasonUnknown: TaskUnknown, scheduler.ReasonSucceeded: TaskSucceeded, scheduler.ReasonRunning: TaskRunning,
	scheduler.ReasonZombie: TaskZombie, scheduler.ReasonNoOffers: TaskNoOffers, scheduler.ReasonNoOfferFits: TaskNoOfferFits,
	scheduler.ReasonExcluded: TaskExcluded, scheduler.ReasonLocalityWait: TaskLocalityWait,
	scheduler.ReasonOffersUsedUp: TaskOffersUsedUp, scheduler.ReasonPending: TaskPending,
}

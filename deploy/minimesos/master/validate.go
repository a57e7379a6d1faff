package master

import (
	"errors"
	"fmt"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// validateCall applies Mesos' stateless call validation (400 on failure).
func validateCall(c *scheduler.Call) error {
	t := c.GetType()
	if t == scheduler.Call_SUBSCRIBE {
		if c.Subscribe == nil || c.Subscribe.FrameworkInfo == nil {
			return errors.New("Expecting 'subscribe' to be present")
		}
		fi := c.Subscribe.FrameworkInfo
		if c.FrameworkID != nil && (fi.ID == nil || fi.ID.Value != c.FrameworkID.Value) {
			return errors.New("'framework_id' differs from 'subscribe.framework_info.id'")
		}
		return nil
	}
	if t == scheduler.Call_UNKNOWN {
		return nil // 501 later, like Mesos
	}
	if c.FrameworkID == nil || c.FrameworkID.Value == "" {
		return errors.New("Expecting 'framework_id' to be present")
	}
	missing := func(name string) error { return fmt.Errorf("Expecting '%s' to be present", name) }
	switch t {
	case scheduler.Call_ACCEPT:
		if c.Accept == nil {
			return missing("accept")
		}
	case scheduler.Call_DECLINE:
		if c.Decline == nil {
			return missing("decline")
		}
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		if c.AcceptInverseOffers == nil {
			return missing("accept_inverse_offers")
		}
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		if c.DeclineInverseOffers == nil {
			return missing("decline_inverse_offers")
		}
	case scheduler.Call_KILL:
		if c.Kill == nil || c.Kill.TaskID.Value == "" {
			return missing("kill")
		}
	case scheduler.Call_SHUTDOWN:
		if c.Shutdown == nil || c.Shutdown.ExecutorID.Value == "" || c.Shutdown.AgentID.Value == "" {
			return missing("shutdown")
		}
	case scheduler.Call_ACKNOWLEDGE:
		a := c.Acknowledge
		if a == nil || a.TaskID.Value == "" || a.AgentID.Value == "" {
			return missing("acknowledge")
		}
		if len(a.UUID) != 16 {
			return errors.New("Not a valid UUID")
		}
	case scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS:
		a := c.AcknowledgeOperationStatus
		if a == nil {
			return missing("acknowledge_operation_status")
		}
		if len(a.UUID) != 16 {
			return errors.New("Not a valid UUID")
		}
	case scheduler.Call_RECONCILE:
		if c.Reconcile == nil {
			return missing("reconcile")
		}
	case scheduler.Call_RECONCILE_OPERATIONS:
		if c.ReconcileOperations == nil {
			return missing("reconcile_operations")
		}
	case scheduler.Call_MESSAGE:
		if c.Message == nil || c.Message.AgentID.Value == "" || c.Message.ExecutorID.Value == "" {
			return missing("message")
		}
	case scheduler.Call_REQUEST:
		if c.Request == nil {
			return missing("request")
		}
	case scheduler.Call_UPDATE_FRAMEWORK:
		if c.UpdateFramework == nil {
			return missing("update_framework")
		}
		if id := c.UpdateFramework.FrameworkInfo.ID; id == nil || id.Value != c.FrameworkID.Value {
			return errors.New("'framework_info.id' is not set or does not match 'framework_id'")
		}
	}
	return nil
}

// validateFrameworkInfo is SUBSCRIBE's stateful-free FrameworkInfo check
// (failures become an in-stream ERROR).
func validateFrameworkInfo(fi *mesos.FrameworkInfo) error {
	var errs []error
	if fi.Name == "" {
		errs = append(errs, errors.New("'name' must be set"))
	}
	multi := capsOf(fi).multiRole
	if multi && fi.Role != nil {
		errs = append(errs, errors.New("'FrameworkInfo.role' must not be set when the framework is MULTI_ROLE capable"))
	}
	if !multi && len(fi.Roles) > 0 {
		errs = append(errs, errors.New("'FrameworkInfo.roles' must not be set when the framework is not MULTI_ROLE capable"))
	}
	seen := map[string]bool{}
	for _, r := range frameworkRoles(fi) {
		if err := validateRole(r); err != nil {
			errs = append(errs, err)
		}
		if seen[r] {
			errs = append(errs, fmt.Errorf("'FrameworkInfo.roles' contains duplicate role '%s'", r))
		}
		seen[r] = true
	}
	if fi.FailoverTimeout != nil && (*fi.FailoverTimeout < 0 || *fi.FailoverTimeout != *fi.FailoverTimeout) {
		errs = append(errs, errors.New("'failover_timeout' must be a non-negative number"))
	}
	return errors.Join(errs...)
}

// validateRole follows Mesos' roles::validate.
func validateRole(r string) error {
	if r == "*" {
		return nil
	}
	bad := func(why string) error { return fmt.Errorf("Role '%s' is invalid: %s", r, why) }
	if r == "" {
		return bad("empty role name")
	}
	if strings.HasPrefix(r, "/") || strings.HasSuffix(r, "/") {
		return bad("role name cannot start or end with '/'")
	}
	for _, part := range strings.Split(r, "/") {
		switch {
		case part == "" || part == "." || part == "..":
			return bad("invalid path component '" + part + "'")
		case part == "*":
			return bad("'*' is only valid as the whole role")
		case strings.HasPrefix(part, "-"):
			return bad("role name component cannot start with '-'")
		case strings.ContainsAny(part, " \t\n\v\f\r\\"):
			return bad("role name cannot contain whitespace or backslashes")
		}
	}
	return nil
}

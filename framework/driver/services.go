package driver

import (
	"net/url"

	"github.com/flint-mesos/flint/framework/backend"
)

// noteShuffleService records the agent's shuffle service a map output's
// address names (an address with exec=: package shuffleserver's form) and
// hands a newly seen one to the backend, which keeps the application
// registered there and says goodbye at the end.
func (c *driverCore) noteShuffleService(addr string) {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || u.Query().Get("exec") == "" {
		return
	}
	svc := backend.ShuffleService{BaseURL: u.Scheme + "://" + u.Host, Pin: u.Query().Get("pin")}
	if c.services == nil {
		c.services = map[backend.ShuffleService]bool{}
	}
	if c.services[svc] {
		return
	}
	c.services[svc] = true
	c.out.ShuffleServices = append(c.out.ShuffleServices, svc)
}

package mesosconn

import "testing"

func TestConfigFromAdvertisesTheDriversWebUI(t *testing.T) {
	c, err := ConfigFrom(flintConfig(t, "flint.mesos.driver.webui.url", "http://driver.example:4041"))
	if err != nil {
		t.Fatal(err)
	}
	if fi := c.withDefaults().frameworkInfo(""); fi.GetWebUiURL() != "http://driver.example:4041" {
		t.Fatalf("webui_url = %q", fi.GetWebUiURL())
	}
	c, _ = ConfigFrom(flintConfig(t))
	if fi := c.withDefaults().frameworkInfo(""); fi.WebUiURL != nil {
		t.Fatalf("webui_url = %q with no UI", fi.GetWebUiURL())
	}
}

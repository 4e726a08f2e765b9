package console

import (
	"fmt"
	"net/http"

	"github.com/toolbelt/toolbelt/policy"
)

// modeView is the Mode page's data: the permission mode calls run in and
// the modes there are.
type modeView struct {
	// Current is the mode now; "" when this server has none to switch.
	Current policy.Mode
	Modes   []modeChoice
}

// modeChoice is a mode as the Mode page lists it.
type modeChoice struct {
	Name, Description string
	Current           bool
}

func (c *Console) loadMode(*http.Request, User) (any, error) {
	v := modeView{Current: c.mode()}
	for _, m := range policy.Modes {
		v.Modes = append(v.Modes, modeChoice{Name: string(m), Description: m.Description(), Current: m == v.Current})
	}
	return v, nil
}

// mode returns the permission mode calls run in now, "" when the console
// has no mode to show (Options.Mode is nil).
func (c *Console) mode() policy.Mode {
	if c.opts.Mode == nil {
		return ""
	}
	return c.opts.Mode("")
}

// switchMode switches every later call to the mode the form names, on
// behalf of u (the switch is audited by Options.SwitchMode).
func (c *Console) switchMode(w http.ResponseWriter, r *http.Request, u User) {
	if c.opts.SwitchMode == nil {
		redirect(w, r, "/mode", "Nothing was switched: this server has no permission mode to switch.")
		return
	}
	m, err := policy.ParseMode(r.PostFormValue("mode"))
	if err == nil {
		err = c.opts.SwitchMode(r.Context(), m, fmt.Sprintf("console user %s (%s)", u.Name, u.Role()))
	}
	if err != nil {
		redirect(w, r, "/mode", "Nothing was switched: "+err.Error())
		return
	}
	redirect(w, r, "/mode", fmt.Sprintf("Switched to %s: %s.", m, m.Description()))
}

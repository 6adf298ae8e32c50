package tool

// Policy is what a run puts between the model and each of its tools: the
// trifecta interlock, the permission gate, the taint tracker and the
// redaction of secrets. Wrap is the one place they are assembled.
type Policy struct {
	// Mode is the permission gate's mode; "" is ModeAsk.
	Mode Mode
	// Trifecta is the interlock's policy; "" is TrifectaRefuse.
	Trifecta Trifecta
	// Asker is who the gate and the interlock ask; nil is nobody, and a
	// call either would ask about is denied or refused.
	Asker Asker
	// Secrets are the values no result may carry (see Redact).
	Secrets []Secret
	// Rules are the saved permission rules the gate applies (see Rules);
	// nil: none.
	Rules *Rules
}

// Wrap returns t under p, its calls counted by tr. From the tool outwards:
//
//	Interlock(Gate(tr.Wrap(Redact(t, p.Secrets)), p.Mode, p.Asker), p.Trifecta, tr, p.Asker)
//
// so a call the interlock refuses is neither asked about nor counted, a
// call the gate denies is not counted, and a result is cleared of secrets
// before anything above the tool sees it.
//
// A call is judged once: the interlock, outermost, asks for the call's
// capabilities (CapabilitiesOf, for its input, when the call is made) and
// hands that judgement down; the gate and the tracker read it.
//
// A call is put to the person at most once. When the interlock would ask
// (TrifectaAsk, the conversation armed, a call that could leak) and the
// gate would too (ModeAsk: a call that could leak reaches the network, so
// it always needs permission), the interlock asks one question carrying
// both reasons, Request.Reason (the interlock's) and Request.Permission
// (the gate's). Yes runs the call past both; no refuses it with the
// interlock's words, "... The call was not run: the user said no
// (--trifecta ask).", since that question was the interlock's first. A
// call the gate denies whatever the answer (ModeReadOnly) is not asked
// about: the gate's denial is its result. Every other call meets each
// layer as it would alone: the interlock's refusals, the gate's questions
// and denials are worded as Interlock and Gate document.
//
// The returned tool has t's Spec and Capabilities and forwards its call
// capabilities (CallCapabilities).
func (p Policy) Wrap(t Tool, tr *Tracker) Tool {
	g := newGate(tr.Wrap(Redact(t, p.Secrets)), p.Mode, p.Asker)
	g.rules = p.Rules
	l := newInterlock(g, p.Trifecta, tr, p.Asker)
	l.gate = g
	return l
}

// Package learn is what mecha reflect, distill and learn share that runs no
// model: the compact rendering of a session a reflecting model reads (with
// the indexes of the messages it was shown), the taint such a reflection
// inherits, the decision that keeps or drops a reflection by its own taint,
// the prompt a distilling model gets (built only from the reflections
// kept), the parsing of the rules models answer with, and
// $MECHA_HOME/learned_rules.md as a file a person may edit.
//
// It never reaches a provider, agent or the network (an import rule): the
// decision what a model may read is made here, apart from any model.
package learn

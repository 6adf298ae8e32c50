// Package providertest is the conformance suite of the HTTP provider
// clients. Its tests run one set of cases against every client flavour
// (anthropic, openai, and openai's local flavour, with and without tool
// call indexes) through internal/fakellm, so that the clients agree on what
// a text answer, a tool call, thinking, usage, a request's shape and every
// kind of failure look like. It holds no code outside its tests.
package providertest

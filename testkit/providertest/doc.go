// Package providertest is the conformance suite of the HTTP provider
// clients. Its tests run one set of cases against every client flavour
// (anthropic, openai, and openai's local flavour, with and without tool
// call indexes, and a server sending content as Mistral's lists of
// parts) through testkit/fakellm, so that the clients agree on what a
// text answer, a tool call, thinking, usage, a request's shape and every
// kind of failure look like; and a table of shapes, one row each, played
// byte for byte from streams written after what real servers send
// (testdata/streams). It holds no code outside its tests.
package providertest

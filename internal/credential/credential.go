// Package credential tells what holds a credential, by a variable's name
// or by what its value is, for the environment handed to tools and servers,
// the values redacted from what they return, and what mecha shows.
package credential

import "strings"

// Scrub is an environment less every variable Held says holds a credential
// (the environment of shell commands and MCP servers), so a model that runs
// env cannot copy a key into the transcript.
func Scrub(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if Held(name, value) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Held reports whether a variable holds a credential: its name is Named,
// or its value holds a URL with a password (postgres://u:pw@host) or a
// query parameter named like a credential (?access_token=...). A URL with
// a user name alone (ssh://git@host) does not make a variable Held, though
// InValue still gives that name as a value to redact.
func Held(name, value string) bool {
	if Named(name) {
		return true
	}
	_, strong := scanValue(value)
	return strong
}

// Named reports whether an environment variable's name says it holds a
// credential. The name is cut into words at '_' and every other character
// that is not a letter or digit, and where a lower-case letter is followed
// by an upper-case one (dbPassword: DB, PASSWORD); case is ignored. Then:
//
//   - A word that is, or ends with, one of SECRET, TOKEN, PASSWORD, PASSWD,
//     PASSPHRASE, CREDENTIAL, APIKEY, PRIVATEKEY, COOKIE or WEBHOOK (a
//     trailing S allowed: CREDENTIALS, GITHUBTOKEN, DBPASSWORD), a word that
//     is CREDS or DSN, or the consecutive words API KEY, PRIVATE KEY or
//     CONNECTION STRING, anywhere in the name, make it a credential's.
//   - PASS, PWD, AUTH, SESSION and KEY (or KEYS) count only as the name's
//     last word, or before a last HEADER, STRING or VALUE: they name a
//     value only there (DB_PASS, MYSQL_PWD, NPM_AUTH, AUTH_HEADER,
//     STRIPE_KEY, where SSH_AUTH_SOCK, XDG_SESSION_TYPE and
//     DBUS_SESSION_BUS_ADDRESS hold no credential). PWD alone is the
//     working directory, and DESKTOP_SESSION names a desktop: neither counts.
//   - A name whose last word is DIR, DIRECTORY, PATH, FILE, SOCK or SOCKET
//     holds where something is, not the thing (PASSWORD_STORE_DIR,
//     TOKEN_FILE, SSH_AUTH_SOCK): it is not a credential's whatever its
//     other words.
//
// A word is matched whole, never inside another: TOKENIZERS_PARALLELISM,
// GIT_ASKPASS, BYPASS_CACHE and XAUTHORITY are not credentials' names.
func Named(name string) bool {
	words := split(name)
	n := len(words)
	if n == 0 || location[words[n-1]] || notCredential[strings.Join(words, "_")] {
		return false
	}
	for i, w := range words {
		if strongWord(w) {
			return true
		}
		if i+1 < n && strongPair[w+"_"+words[i+1]] {
			return true
		}
		last := i == n-1 || i == n-2 && valueSuffix[words[n-1]]
		if last && weak[w] && (w != "PWD" || n > 1) {
			return true
		}
	}
	return false
}

// strong are the words that make a name a credential's wherever they are,
// alone or as the end of a word (GITHUBTOKEN), with or without a plural S.
var strong = []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "PRIVATEKEY", "COOKIE", "WEBHOOK"}

// strongWhole are short words that count only whole.
var strongWhole = map[string]bool{"CREDS": true, "DSN": true}

// strongPair are two consecutive words that make a name a credential's.
var strongPair = map[string]bool{"API_KEY": true, "PRIVATE_KEY": true, "CONNECTION_STRING": true}

// weak are the words that count only at the end of a name.
var weak = map[string]bool{"PASS": true, "PWD": true, "AUTH": true, "SESSION": true, "KEY": true, "KEYS": true}

// valueSuffix are the last words after which a weak word still counts.
var valueSuffix = map[string]bool{"HEADER": true, "STRING": true, "VALUE": true}

// location are the last words of names that hold where something is.
var location = map[string]bool{"DIR": true, "DIRECTORY": true, "PATH": true, "FILE": true, "SOCK": true, "SOCKET": true}

// notCredential are whole names that match a rule and hold no credential.
var notCredential = map[string]bool{"DESKTOP_SESSION": true}

func strongWord(w string) bool {
	if strongWhole[w] {
		return true
	}
	for _, s := range strong {
		if strings.HasSuffix(w, s) || strings.HasSuffix(w, s+"S") {
			return true
		}
	}
	return false
}

// split cuts a name into upper-case words (see Named).
func split(name string) []string {
	var words []string
	start := -1
	for i := 0; i <= len(name); i++ {
		var c byte
		if i < len(name) {
			c = name[i]
		}
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		camel := alnum && i > 0 && 'A' <= c && c <= 'Z' && 'a' <= name[i-1] && name[i-1] <= 'z'
		if start >= 0 && (!alnum || camel) {
			words = append(words, strings.ToUpper(name[start:i]))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	return words
}

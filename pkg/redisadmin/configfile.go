package redisadmin

import (
	"errors"
	"fmt"
	"strings"
)

// masterauthDirective starts the line of the users file with the
// clients' current password.
const masterauthDirective = "masterauth "

// MasterAuth returns the password of the masterauth line of a users
// file that Access.ConfigFile wrote, and whether it has one (a
// cluster without authentication has none). A line that is not exactly
// what Quote writes is an error, never a guess.
func MasterAuth(usersConf string) (password string, found bool, err error) {
	for line := range strings.SplitSeq(usersConf, "\n") {
		quoted, ok := strings.CutPrefix(line, masterauthDirective)
		if !ok {
			continue
		}
		password, err := Unquote(quoted)
		if err != nil {
			return "", true, fmt.Errorf("the masterauth line: %w", err)
		}
		return password, true, nil
	}
	return "", false, nil
}

// errNotQuoted is a value that Quote did not write.
var errNotQuoted = errors.New("not a value as the operator quotes it")

// Unquote inverts Quote: s is a double-quoted value whose
// backslash escapes are \\, \", \n, \r, \t and \xHH, every other byte
// printable ASCII.
func Unquote(s string) (string, error) {
	body, opened := strings.CutPrefix(s, `"`)
	body, closed := strings.CutSuffix(body, `"`)
	if !opened || !closed {
		return "", errNotQuoted
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '"' || c < 0x20 || c >= 0x7f:
			return "", errNotQuoted
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		if i++; i == len(body) {
			return "", errNotQuoted
		}
		switch e := body[i]; e {
		case '\\', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+2 >= len(body) {
				return "", errNotQuoted
			}
			v, ok := hexByte(body[i+1], body[i+2])
			if !ok {
				return "", errNotQuoted
			}
			b.WriteByte(v)
			i += 2
		default:
			return "", errNotQuoted
		}
	}
	return b.String(), nil
}

// hexByte decodes two hexadecimal digits.
func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexDigit(hi)
	l, ok2 := hexDigit(lo)
	return h<<4 | l, ok1 && ok2
}

// hexDigit decodes one hexadecimal digit, either case.
func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

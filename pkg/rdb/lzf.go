package rdb

import "errors"

// lzfDecompress expands LZF data (liblzf's format, which Redis compresses
// long strings with) into exactly size bytes. The output is allocated once
// at size, which the caller has bounded; every back reference is checked to
// stay within it.
func lzfDecompress(in []byte, size int) ([]byte, error) {
	// The input can expand by at most a factor of about 100 (a 2-byte back
	// reference copies up to 264 bytes); a larger declared size is a lie
	// that would only cost memory.
	if size > len(in)*132+8 {
		return nil, errors.New("LZF: declared length does not fit the compressed data")
	}
	out := make([]byte, 0, size)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 {
			n := ctrl + 1
			if i+n > len(in) || len(out)+n > size {
				return nil, errors.New("LZF: literal run overruns")
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		back := (ctrl & 0x1f) << 8
		if n == 7 {
			if i >= len(in) {
				return nil, errors.New("LZF: truncated back reference")
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errors.New("LZF: truncated back reference")
		}
		back += int(in[i]) + 1
		i++
		n += 2
		ref := len(out) - back
		if ref < 0 || len(out)+n > size {
			return nil, errors.New("LZF: back reference out of range")
		}
		for k := 0; k < n; k++ {
			out = append(out, out[ref+k])
		}
	}
	if len(out) != size {
		return nil, errors.New("LZF: data does not expand to its declared length")
	}
	return out, nil
}

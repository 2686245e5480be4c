package data

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// This file reads R's serialisation format (XDR flavour, versions 2 and 3) far enough to pull character
// vectors, lists and data frames out of the .rdb/.rdx lazy-load databases and .rda files that R packages
// ship their data in. It is a real reader of the format, not a string scraper: it follows the item
// headers, attributes, pairlists and the reference table.

// R SEXP type codes and the serialisation's pseudo-types.
const (
	rNILSXP     = 0
	rSYMSXP     = 1
	rLISTSXP    = 2
	rCLOSXP     = 3
	rENVSXP     = 4
	rPROMSXP    = 5
	rLANGSXP    = 6
	rCHARSXP    = 9
	rLGLSXP     = 10
	rINTSXP     = 13
	rREALSXP    = 14
	rCPLXSXP    = 15
	rSTRSXP     = 16
	rDOTSXP     = 17
	rVECSXP     = 19
	rEXPRSXP    = 20
	rRAWSXP     = 24
	rS4SXP      = 25
	rALTREP     = 238
	rATTRLIST   = 239
	rATTRLANG   = 240
	rBASEENV    = 241
	rEMPTYENV   = 242
	rGLOBALENV  = 253
	rNILVALUE   = 254
	rREFSXP     = 255
	rMISSINGARG = 251
	rUNBOUND    = 252
	rBASENS     = 250
)

// RValue is one deserialised R object. Only the fields that matter for its Type are set.
type RValue struct {
	Type    int
	Strings []string // STRSXP (NA as ""), CHARSXP, SYMSXP name
	Ints    []int32  // INTSXP, LGLSXP
	Reals   []float64
	Raw     []byte
	Items   []*RValue          // VECSXP/EXPRSXP elements, pairlist values (in order)
	Tags    []string           // pairlist tags, parallel to Items
	Attr    map[string]*RValue // attributes: names, class, row.names, levels...
}

// Names returns the "names" attribute (element names of a list or data frame columns).
func (v *RValue) Names() []string {
	if n := v.Attr["names"]; n != nil {
		return n.Strings
	}
	return nil
}

// Field returns the list element (or pairlist value) called name, or nil.
func (v *RValue) Field(name string) *RValue {
	names := v.Names()
	if v.Type == rLISTSXP {
		names = v.Tags
	}
	for i, n := range names {
		if n == name && i < len(v.Items) {
			return v.Items[i]
		}
	}
	return nil
}

type rReader struct {
	r    *bufio.Reader
	refs []*RValue
}

// ReadRSerialized parses one R serialisation stream ("X\n" header, XDR) from r.
func ReadRSerialized(r io.Reader) (*RValue, error) {
	rr := &rReader{r: bufio.NewReader(r)}
	var magic [2]byte
	if _, err := io.ReadFull(rr.r, magic[:]); err != nil {
		return nil, fmt.Errorf("serialised R data: reading header: %w", err)
	}
	if magic != [2]byte{'X', '\n'} {
		return nil, fmt.Errorf("serialised R data: format %q is not XDR (want \"X\\n\")", magic[:])
	}
	version, err := rr.int()
	if err != nil {
		return nil, err
	}
	if version != 2 && version != 3 {
		return nil, fmt.Errorf("serialised R data: version %d not supported (want 2 or 3)", version)
	}
	if _, err := rr.int(); err != nil { // R version that wrote it
		return nil, err
	}
	if _, err := rr.int(); err != nil { // minimal R version to read it
		return nil, err
	}
	if version == 3 {
		n, err := rr.int()
		if err != nil {
			return nil, err
		}
		if _, err := rr.bytes(int(n)); err != nil { // native encoding name, e.g. "UTF-8"
			return nil, err
		}
	}
	return rr.item()
}

func (rr *rReader) int() (int32, error) {
	var b [4]byte
	if _, err := io.ReadFull(rr.r, b[:]); err != nil {
		return 0, fmt.Errorf("serialised R data: truncated stream: %w", err)
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

func (rr *rReader) bytes(n int) ([]byte, error) {
	if n < 0 || n > 1<<31 {
		return nil, fmt.Errorf("serialised R data: bad byte count %d", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(rr.r, b); err != nil {
		return nil, fmt.Errorf("serialised R data: truncated stream reading %d bytes: %w", n, err)
	}
	return b, nil
}

func (rr *rReader) length() (int, error) {
	n, err := rr.int()
	if err != nil {
		return 0, err
	}
	if n != -1 {
		if n < 0 {
			return 0, fmt.Errorf("serialised R data: negative length %d", n)
		}
		return int(n), nil
	}
	hi, err := rr.int()
	if err != nil {
		return 0, err
	}
	lo, err := rr.int()
	if err != nil {
		return 0, err
	}
	return int(uint64(uint32(hi))<<32 | uint64(uint32(lo))), nil
}

func (rr *rReader) item() (*RValue, error) {
	flags, err := rr.int()
	if err != nil {
		return nil, err
	}
	return rr.itemFrom(flags)
}

// itemFrom reads the rest of an item whose flags word has been read.
func (rr *rReader) itemFrom(flags int32) (*RValue, error) {
	typ := int(flags & 0xff)
	hasAttr := flags&(1<<9) != 0
	hasTag := flags&(1<<10) != 0
	switch typ {
	case rNILVALUE, rEMPTYENV, rBASEENV, rGLOBALENV, rUNBOUND, rMISSINGARG, rBASENS:
		return &RValue{Type: rNILSXP}, nil
	case rREFSXP:
		idx := int(flags >> 8)
		if idx == 0 {
			i, err := rr.int()
			if err != nil {
				return nil, err
			}
			idx = int(i)
		}
		if idx < 1 || idx > len(rr.refs) {
			return nil, fmt.Errorf("serialised R data: reference %d outside table of %d", idx, len(rr.refs))
		}
		return rr.refs[idx-1], nil
	case rSYMSXP:
		name, err := rr.item()
		if err != nil {
			return nil, err
		}
		v := &RValue{Type: rSYMSXP, Strings: name.Strings}
		rr.refs = append(rr.refs, v)
		return v, nil
	case rENVSXP:
		return rr.env()
	case rLISTSXP, rLANGSXP, rCLOSXP, rPROMSXP, rDOTSXP, rATTRLIST, rATTRLANG:
		return rr.pairlist(hasAttr, hasTag)
	case rCHARSXP:
		n, err := rr.int()
		if err != nil {
			return nil, err
		}
		if n == -1 {
			return &RValue{Type: rCHARSXP, Strings: []string{""}}, nil
		}
		b, err := rr.bytes(int(n))
		if err != nil {
			return nil, err
		}
		return &RValue{Type: rCHARSXP, Strings: []string{string(b)}}, nil
	case rALTREP:
		return rr.altrep()
	}
	v, err := rr.vector(typ)
	if err != nil {
		return nil, err
	}
	if hasAttr {
		if v.Attr, err = rr.attributes(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (rr *rReader) vector(typ int) (*RValue, error) {
	v := &RValue{Type: typ}
	if typ == rS4SXP {
		return v, nil
	}
	n, err := rr.length()
	if err != nil {
		return nil, err
	}
	switch typ {
	case rLGLSXP, rINTSXP:
		v.Ints = make([]int32, n)
		for i := range v.Ints {
			if v.Ints[i], err = rr.int(); err != nil {
				return nil, err
			}
		}
	case rREALSXP, rCPLXSXP:
		if typ == rCPLXSXP {
			n *= 2
		}
		b, err := rr.bytes(8 * n)
		if err != nil {
			return nil, err
		}
		v.Reals = make([]float64, n)
		for i := range v.Reals {
			v.Reals[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i:]))
		}
	case rSTRSXP:
		v.Strings = make([]string, n)
		for i := range v.Strings {
			s, err := rr.item()
			if err != nil {
				return nil, err
			}
			if s.Type != rCHARSXP {
				return nil, fmt.Errorf("serialised R data: string vector element of type %d, want CHARSXP", s.Type)
			}
			v.Strings[i] = s.Strings[0]
		}
	case rVECSXP, rEXPRSXP:
		v.Items = make([]*RValue, n)
		for i := range v.Items {
			if v.Items[i], err = rr.item(); err != nil {
				return nil, err
			}
		}
	case rRAWSXP:
		if v.Raw, err = rr.bytes(n); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("serialised R data: object type %d not supported", typ)
	}
	return v, nil
}

// pairlist reads a chain of CONS cells iteratively (long pairlists would otherwise recurse deeply).
func (rr *rReader) pairlist(hasAttr, hasTag bool) (*RValue, error) {
	v := &RValue{Type: rLISTSXP}
	for {
		if hasAttr {
			if _, err := rr.item(); err != nil {
				return nil, err
			}
		}
		tag := ""
		if hasTag {
			t, err := rr.item()
			if err != nil {
				return nil, err
			}
			if len(t.Strings) > 0 {
				tag = t.Strings[0]
			}
		}
		car, err := rr.item()
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, car)
		v.Tags = append(v.Tags, tag)
		flags, err := rr.int()
		if err != nil {
			return nil, err
		}
		next := int(flags & 0xff)
		if next != rLISTSXP && next != rLANGSXP && next != rATTRLIST && next != rATTRLANG {
			// The CDR is not another cons cell: read it as a normal item that starts with these flags.
			if next != rNILVALUE {
				if _, err := rr.itemFrom(flags); err != nil {
					return nil, err
				}
			}
			return v, nil
		}
		hasAttr, hasTag = flags&(1<<9) != 0, flags&(1<<10) != 0
	}
}

func (rr *rReader) attributes() (map[string]*RValue, error) {
	a, err := rr.item()
	if err != nil {
		return nil, err
	}
	attr := make(map[string]*RValue, len(a.Items))
	for i, t := range a.Tags {
		attr[t] = a.Items[i]
	}
	return attr, nil
}

func (rr *rReader) env() (*RValue, error) {
	v := &RValue{Type: rENVSXP}
	rr.refs = append(rr.refs, v)
	if _, err := rr.int(); err != nil { // locked
		return nil, err
	}
	for range 4 { // enclosure, frame, hash table, attributes
		if _, err := rr.item(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// altrep expands the compact forms R writes for sequences and wrapped vectors.
func (rr *rReader) altrep() (*RValue, error) {
	info, err := rr.item()
	if err != nil {
		return nil, err
	}
	state, err := rr.item()
	if err != nil {
		return nil, err
	}
	attr, err := rr.item()
	if err != nil {
		return nil, err
	}
	class := ""
	if len(info.Items) > 0 && len(info.Items[0].Strings) > 0 {
		class = info.Items[0].Strings[0]
	}
	var v *RValue
	switch {
	case class == "compact_intseq" || class == "compact_realseq":
		if len(state.Reals) != 3 {
			return nil, fmt.Errorf("serialised R data: %s state has %d numbers, want 3", class, len(state.Reals))
		}
		n, start, step := int(state.Reals[0]), state.Reals[1], state.Reals[2]
		v = &RValue{Type: rREALSXP, Reals: make([]float64, n)}
		for i := range v.Reals {
			v.Reals[i] = start + float64(i)*step
		}
		if class == "compact_intseq" {
			v = &RValue{Type: rINTSXP, Ints: make([]int32, n)}
			for i := range v.Ints {
				v.Ints[i] = int32(start + float64(i)*step)
			}
		}
	case strings.HasPrefix(class, "wrap_"):
		if len(state.Items) == 0 {
			return nil, fmt.Errorf("serialised R data: %s state is empty", class)
		}
		inner := *state.Items[0]
		v = &inner
	default:
		return nil, fmt.Errorf("serialised R data: ALTREP class %q not supported", class)
	}
	if len(attr.Items) > 0 {
		v.Attr = make(map[string]*RValue)
		for i, t := range attr.Tags {
			v.Attr[t] = attr.Items[i]
		}
	}
	return v, nil
}

// decompressR undoes the compression R puts around serialised objects: gzip, bzip2 or zlib with the
// 4-byte big-endian uncompressed length in front (lazy-load DB entries). xz needs a decoder the
// standard library does not have, so it is reported as such.
func decompressR(raw []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(raw, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case bytes.HasPrefix(raw, []byte("BZh")):
		return io.ReadAll(bzip2.NewReader(bytes.NewReader(raw)))
	case bytes.HasPrefix(raw, []byte{0xfd, '7', 'z', 'X', 'Z'}):
		return nil, errors.New("xz-compressed R data is not supported (standard library has no xz decoder)")
	case len(raw) > 4 && raw[4] == 0x78: // zlib header after the length word
		want := binary.BigEndian.Uint32(raw)
		zr, err := zlib.NewReader(bytes.NewReader(raw[4:]))
		if err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		if uint32(len(out)) != want {
			return nil, fmt.Errorf("zlib stream gave %d bytes, header says %d", len(out), want)
		}
		return out, nil
	case len(raw) > 4 && raw[4] == '2':
		return io.ReadAll(bzip2.NewReader(bytes.NewReader(raw[5:])))
	case len(raw) > 4 && raw[4] == 'Z':
		return nil, errors.New("xz-compressed R lazy-load entry is not supported (standard library has no xz decoder)")
	}
	return raw, nil
}

// ReadRLazyLoad reads every object of an R lazy-load database (the pair NAME.rdx index and NAME.rdb
// data file, given by either path without extension) and returns them by name.
func ReadRLazyLoad(base string) (map[string]*RValue, error) {
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".rdx"), ".rdb")
	idxRaw, err := os.ReadFile(base + ".rdx")
	if err != nil {
		return nil, err
	}
	idx, err := parseRBytes(idxRaw)
	if err != nil {
		return nil, fmt.Errorf("%s.rdx: %w", filepath.Base(base), err)
	}
	vars := idx.Field("variables")
	if vars == nil {
		return nil, fmt.Errorf("%s.rdx: no \"variables\" entry in the index", filepath.Base(base))
	}
	db, err := os.ReadFile(base + ".rdb")
	if err != nil {
		return nil, err
	}
	out := make(map[string]*RValue)
	for i, name := range vars.Names() {
		pos := vars.Items[i].Ints
		if len(pos) != 2 || pos[0] < 0 || int(pos[0])+int(pos[1]) > len(db) {
			return nil, fmt.Errorf("%s.rdb: object %q has bad position %v in a file of %d bytes",
				filepath.Base(base), name, pos, len(db))
		}
		v, err := parseRBytes(db[pos[0] : pos[0]+pos[1]])
		if err != nil {
			return nil, fmt.Errorf("%s.rdb: object %q: %w", filepath.Base(base), name, err)
		}
		out[name] = v
	}
	return out, nil
}

func parseRBytes(raw []byte) (*RValue, error) {
	plain, err := decompressR(raw)
	if err != nil {
		return nil, err
	}
	return ReadRSerialized(bytes.NewReader(plain))
}

// ReadRData reads an .rda/.RData file (optionally gzip/bzip2-compressed "RDX2"/"RDX3" + serialised
// pairlist of named objects) and returns the objects by name.
func ReadRData(path string) (map[string]*RValue, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	plain, err := decompressR(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !bytes.HasPrefix(plain, []byte("RDX2\n")) && !bytes.HasPrefix(plain, []byte("RDX3\n")) {
		return nil, fmt.Errorf("%s: not an R data file (no RDX2/RDX3 header)", path)
	}
	v, err := ReadRSerialized(bytes.NewReader(plain[5:]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(map[string]*RValue, len(v.Items))
	for i, t := range v.Tags {
		out[t] = v.Items[i]
	}
	return out, nil
}

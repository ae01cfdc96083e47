package release

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SBOMFile is the release's software bill of materials: CycloneDX 1.5
// JSON.
const SBOMFile = "statewright.cdx.json"

// The CycloneDX 1.5 JSON types the SBOM uses (a subset of the schema).
type (
	// BOM is a CycloneDX document.
	BOM struct {
		BOMFormat    string       `json:"bomFormat"`
		SpecVersion  string       `json:"specVersion"`
		SerialNumber string       `json:"serialNumber"`
		Version      int          `json:"version"`
		Metadata     BOMMetadata  `json:"metadata"`
		Components   []Component  `json:"components"`
		Dependencies []Dependency `json:"dependencies"`
	}
	// BOMMetadata says what the BOM describes and what wrote it.
	BOMMetadata struct {
		Timestamp string     `json:"timestamp"`
		Tools     BOMTools   `json:"tools"`
		Component Component  `json:"component"`
		Props     []Property `json:"properties,omitempty"`
	}
	// BOMTools lists the tools that wrote the BOM.
	BOMTools struct {
		Components []Component `json:"components"`
	}
	// Component is a file, an application or a library.
	Component struct {
		Type    string     `json:"type"`
		BOMRef  string     `json:"bom-ref,omitempty"`
		Name    string     `json:"name"`
		Version string     `json:"version,omitempty"`
		PURL    string     `json:"purl,omitempty"`
		Hashes  []Hash     `json:"hashes,omitempty"`
		Props   []Property `json:"properties,omitempty"`
	}
	// Hash is a digest of a component.
	Hash struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	}
	// Property is a name/value pair.
	Property struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	// Dependency says which components a component contains.
	Dependency struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	}
)

// goPURL is a Go module's package URL.
func goPURL(path, version string) string { return "pkg:golang/" + path + "@" + version }

// h1Hash turns a go.sum "h1:" hash (base64 SHA-256 of the module's file
// list) into a CycloneDX SHA-256 hash, as cyclonedx-gomod does.
func h1Hash(sum string) []Hash {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != sha256.Size {
		return nil
	}
	return []Hash{{Alg: "SHA-256", Content: hex.EncodeToString(raw)}}
}

// SBOM describes the release in dir: every file (binaries with the
// modules and toolchain linked into each, read from the binary's own build
// information as `go version -m` reads it, and the images with their
// digests), under the product's name and stamp. It reads no network.
func SBOM(dir string, s Stamp, files []string) (*BOM, error) {
	root := Component{Type: "application", BOMRef: goPURL(Module, s.Version), Name: Module, Version: s.Version, PURL: goPURL(Module, s.Version)}
	bom := &BOM{
		BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1,
		Metadata: BOMMetadata{
			Timestamp: s.Date,
			Tools:     BOMTools{Components: []Component{{Type: "application", Name: Module + "/internal/release", Version: s.Version}}},
			Component: root,
			Props:     []Property{{"statewright:commit", s.Commit}, {"statewright:date", s.Date}},
		},
	}
	libs := map[string]Component{}
	rootDeps := Dependency{Ref: root.BOMRef}
	for _, name := range files {
		path := filepath.Join(dir, name)
		sum, err := FileSHA256(path)
		if err != nil {
			return nil, err
		}
		c := Component{Type: "file", BOMRef: "file:" + name, Name: name, Version: s.Version, Hashes: []Hash{{"SHA-256", sum}}}
		dep := Dependency{Ref: c.BOMRef, DependsOn: []string{}}
		if bi, err := buildinfo.ReadFile(path); err == nil {
			c.Type = "application"
			c.Props = append(c.Props, Property{"go:main", bi.Path})
			for _, st := range bi.Settings {
				c.Props = append(c.Props, Property{"go:build:" + st.Key, st.Value})
			}
			std := Component{Type: "library", Name: "std", Version: bi.GoVersion, PURL: goPURL("std", bi.GoVersion)}
			std.BOMRef = std.PURL
			libs[std.BOMRef] = std
			dep.DependsOn = append(dep.DependsOn, std.BOMRef)
			for _, m := range bi.Deps {
				if m.Replace != nil {
					m = m.Replace
				}
				lib := Component{Type: "library", Name: m.Path, Version: m.Version, PURL: goPURL(m.Path, m.Version), Hashes: h1Hash(m.Sum)}
				lib.BOMRef = lib.PURL
				libs[lib.BOMRef] = lib
				dep.DependsOn = append(dep.DependsOn, lib.BOMRef)
			}
		} else if strings.HasSuffix(name, ".tar") {
			c.Type = "container"
		}
		slices.Sort(dep.DependsOn)
		bom.Components = append(bom.Components, c)
		bom.Dependencies = append(bom.Dependencies, dep)
		rootDeps.DependsOn = append(rootDeps.DependsOn, c.BOMRef)
	}
	refs := make([]string, 0, len(libs))
	for r := range libs {
		refs = append(refs, r)
	}
	slices.Sort(refs)
	for _, r := range refs {
		bom.Components = append(bom.Components, libs[r])
	}
	bom.Dependencies = append([]Dependency{rootDeps}, bom.Dependencies...)
	// A serial number derived from the content: the same release gets the
	// same document.
	body, err := json.Marshal(bom)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(body)
	h[6] = h[6]&0x0f | 0x80 // UUID version 8 (custom), RFC 9562
	h[8] = h[8]&0x3f | 0x80 // RFC 4122 variant
	bom.SerialNumber = fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
	return bom, nil
}

// WriteSBOM writes the SBOM of files in dir to dir/SBOMFile.
func WriteSBOM(dir string, s Stamp, files []string) error {
	bom, err := SBOM(dir, s, files)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(bom, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, SBOMFile), append(b, '\n'), 0o644)
}

// ReadSBOM reads dir/SBOMFile.
func ReadSBOM(dir string) (*BOM, error) {
	b, err := os.ReadFile(filepath.Join(dir, SBOMFile))
	if err != nil {
		return nil, err
	}
	var bom BOM
	if err := json.Unmarshal(b, &bom); err != nil {
		return nil, fmt.Errorf("%s: %w", SBOMFile, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != "1.5" {
		return nil, fmt.Errorf("%s: not a CycloneDX 1.5 document", SBOMFile)
	}
	return &bom, nil
}

// StampOf returns the stamp an SBOM records.
func (b *BOM) StampOf() Stamp {
	s := Stamp{Version: b.Metadata.Component.Version, Date: b.Metadata.Timestamp}
	for _, p := range b.Metadata.Props {
		if p.Name == "statewright:commit" {
			s.Commit = p.Value
		}
	}
	s.Dirty = strings.HasSuffix(s.Version, "+dirty")
	return s
}

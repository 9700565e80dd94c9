package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// redPixelPNG returns a 1x1 red PNG, base64-encoded: the smallest image the
// image scenarios accept.
func redPixelPNG() (string, error) {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// silentWAV returns 10 ms of 8 kHz 16-bit mono silence as a RIFF WAVE file,
// base64-encoded.
func silentWAV() string {
	const (
		rate     = 8000
		channels = 1
		bits     = 16
		samples  = rate / 100
	)
	data := samples * channels * bits / 8
	var b bytes.Buffer
	put := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	put(uint32(36 + data))
	b.WriteString("WAVEfmt ")
	put(uint32(16))                         // fmt chunk size
	put(uint16(1))                          // PCM
	put(uint16(channels))                   //
	put(uint32(rate))                       //
	put(uint32(rate * channels * bits / 8)) // byte rate
	put(uint16(channels * bits / 8))        // block align
	put(uint16(bits))                       //
	b.WriteString("data")
	put(uint32(data))
	b.Write(make([]byte, data))
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

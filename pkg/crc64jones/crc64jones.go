// Package crc64jones computes CRC-64/Jones, the checksum Redis appends to RDB
// files and DUMP payloads: reflected, polynomial 0xad93d23594c935a9, initial
// value 0, no final xor. It wraps hash/crc64, whose tables are reflected but
// which inverts the value before and after each update; Update undoes both.
package crc64jones

import "hash/crc64"

// reversed is the polynomial bit-reversed, the form hash/crc64 takes.
const reversed = 0x95ac9329ac4bc9b5

var table = crc64.MakeTable(reversed)

// Update returns the checksum crc extended by p; start from 0.
func Update(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, table, p)
}

// Checksum returns the checksum of p.
func Checksum(p []byte) uint64 { return Update(0, p) }

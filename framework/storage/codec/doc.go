// Package codec is the compression of input and output files, chosen by file name
// extension as Hadoop's codecs are: .gz (gzip), .zst (Zstandard), .bz2 (bzip2, read only)
// and .xz. None of them is split by Flint: a compressed file is read whole by one task
// (decompression must start at the file's first byte), while an uncompressed file is split
// into byte ranges. .snappy is not supported: Hadoop's SnappyCodec writes its own block
// framing, which no well-kept Go library reads.
package codec

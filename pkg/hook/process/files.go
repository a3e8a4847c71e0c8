package process

import (
	"errors"
	"os"
	"syscall"
)

// WriteFile creates path with mode 0600 and data (a webhook run's
// response file is created under both its names), with the system calls
// alone: a file of package os is offered to
// the runtime's poller first, which a regular file refuses, and an empty
// write is still a call. A run writes nine files; a CPU profile of the
// operator answering admission requests put a third of its CPU in them.
func WriteFile(path string, data []byte) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			_ = syscall.Close(fd)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// LimitedBuffer keeps up to Limit bytes, in Buf, and records whether more came; it
// never fails a write, so the process is not blocked on a full pipe.
type LimitedBuffer struct {
	Limit    int64
	Buf      []byte
	Overflow bool
}

func (b *LimitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	room := b.Limit - int64(len(b.Buf))
	if int64(n) > room {
		b.Overflow = true
		p = p[:max(room, 0)]
	}
	b.Buf = append(b.Buf, p...)
	return n, nil
}

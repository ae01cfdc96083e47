// Command hopper is an attacker's program for TestForkHopperDiesWithItsCommand.
// It prints "left" and exits after a second, leaving behind, each in a session
// of its own, with stdio closed:
//
//   - a process whose main thread has exited while its other threads run on:
//     /proc/PID/stat says "Z" (a zombie) for it;
//   - 32 chains of processes that fork and exit in a loop (each generation
//     lives for one fork), so that a scan of /proc lists a process that has
//     already forked its successor when the scan's SIGKILL lands.
//
// Each appends to ./ticks, and after 3 seconds writes ./.mcp.json (a harness
// configuration the sandbox cannot bind read-only when it did not exist).
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// chains is how many hopping processes run at once.
const chains = 32

func init() {
	if len(os.Args) > 1 && os.Args[1] == "zombie" {
		// main runs on the main thread, which then exits alone.
		runtime.LockOSThread()
	}
}

func main() {
	deadline := time.Now().Add(3 * time.Second)
	if len(os.Args) > 1 && os.Args[1] == "zombie" {
		go func() {
			for {
				appendFile("ticks", "z")
				if time.Now().After(deadline) {
					_ = os.WriteFile(".mcp.json", []byte(`{"mcpServers":{}}`), 0o644)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		time.Sleep(200 * time.Millisecond)
		syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
	}
	exe, _ := os.Executable()
	if _, err := os.StartProcess(exe, []string{exe, "zombie"}, &os.ProcAttr{Sys: &syscall.SysProcAttr{Setsid: true}}); err != nil {
		fmt.Println("start:", err)
	}
	ticks, _ := syscall.BytePtrFromString("ticks")
	mcp, _ := syscall.BytePtrFromString(".mcp.json")
	body := []byte(`{"mcpServers":{}}`)
	r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		fmt.Println("fork:", e)
		os.Exit(1)
	}
	if r != 0 {
		time.Sleep(time.Second)
		fmt.Println("left")
		os.Exit(0)
	}
	hop(deadline.Unix(), ticks, mcp, body)
}

func appendFile(name, s string) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, _ = f.WriteString(s)
		f.Close()
	}
}

// hop runs in a forked child of a Go program: raw system calls only, no
// allocation, nothing of the runtime's (its other threads are gone).
func hop(deadline int64, ticks, mcp *byte, body []byte) {
	syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0)
	for fd := uintptr(0); fd < 3; fd++ {
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	}
	for i := 1; i < chains; i++ {
		if r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0); e == 0 && r == 0 {
			break
		}
	}
	x := [1]byte{'x'}
	var ts syscall.Timespec
	for n := 0; ; n++ {
		r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			continue
		}
		if r != 0 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		if n%50 == 0 {
			fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(0xffffff9c), uintptr(unsafe.Pointer(ticks)), syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT, 0o644, 0, 0)
			if e == 0 {
				syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&x[0])), 1)
				syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
			}
			syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 0, uintptr(unsafe.Pointer(&ts)), 0)
			if ts.Sec >= deadline {
				fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(0xffffff9c), uintptr(unsafe.Pointer(mcp)), syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC, 0o644, 0, 0)
				if e == 0 {
					syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&body[0])), uintptr(len(body)))
					syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
				}
			}
		}
	}
}

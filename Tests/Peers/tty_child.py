"""A terminal program for odr's tests, as a pager or an editor would be:
it opens /dev/tty (not its stdout), switches it to non-canonical mode
("pager": echo off, signals on; "editor": raw, so Ctrl-C is a key),
draws on the alternate screen with the terminal's size and the value of
$WEATHER_KEY, reads keys until "q", then restores the terminal and says
what it read (Python's repr of the bytes)."""
import fcntl
import os
import struct
import sys
import termios

mode = sys.argv[1]
fd = os.open("/dev/tty", os.O_RDWR)
saved = termios.tcgetattr(fd)
settings = termios.tcgetattr(fd)
settings[3] &= ~(termios.ICANON | termios.ECHO)
if mode == "editor":
    settings[3] &= ~termios.ISIG
    settings[0] &= ~(termios.IXON | termios.ICRNL)
termios.tcsetattr(fd, termios.TCSANOW, settings)
rows, cols = struct.unpack("hhhh", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))[:2]
key = os.environ["WEATHER_KEY"].encode()
screen = b"\x1b[?1049h\x1b[2J\x1b[H" + b"size=%d %d\r\n" % (rows, cols)
screen += b"\x1b[5;10Hkey=" + key if mode == "editor" else b"key=" + key + b"\r\n"
os.write(fd, screen)
got = b""
while not got.endswith(b"q"):
    got += os.read(fd, 1)
termios.tcsetattr(fd, termios.TCSANOW, saved)
os.write(fd, b"\x1b[?1049l" + ("%s read=%r\n" % (mode, got)).encode())

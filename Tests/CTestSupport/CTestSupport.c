#define _GNU_SOURCE
#include "CTestSupport.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int ct_tgkill(int32_t tgid, int32_t tid, int sig) {
    return syscall(SYS_tgkill, (pid_t)tgid, (pid_t)tid, sig) == 0 ? 0 : errno;
}

int64_t ct_thread_cpu_ns(int32_t tid) {
    // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), as glibc's pthread_getcpuclockid.
    clockid_t clock = (clockid_t)(((unsigned int)~tid) << 3) | 6;
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) return -(int64_t)errno;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ct_list_tasks(int32_t *out, int capacity) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -errno;
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        if (n < capacity) out[n] = (int32_t)atoi(entry->d_name);
        n++;
    }
    closedir(dir);
    return n < capacity ? n : capacity;
}

int ct_task_name(int32_t tid, char *buffer, int capacity) {
    if (capacity <= 0) return EINVAL;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    int fd;
    do { fd = open(path, O_RDONLY | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
    if (fd < 0) return errno;
    ssize_t got;
    do { got = read(fd, buffer, (size_t)capacity - 1); } while (got < 0 && errno == EINTR);
    int error = got < 0 ? errno : 0;
    close(fd);
    if (error) return error;
    buffer[got] = 0;
    if (got > 0 && buffer[got - 1] == '\n') buffer[got - 1] = 0;
    return 0;
}

int ct_thread_drop_capability(int cap) {
    if (cap < 0 || cap > CAP_LAST_CAP) {
        return EINVAL;
    }
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capget, &header, data) != 0) {
        return errno;
    }
    unsigned index = (unsigned)cap / 32;
    uint32_t mask = ~(UINT32_C(1) << ((unsigned)cap % 32));
    data[index].effective &= mask;
    data[index].permitted &= mask;
    data[index].inheritable &= mask;
    // The raw system call: capset(2) changes the calling thread only.
    if (syscall(SYS_capset, &header, data) != 0) {
        return errno;
    }
    return 0;
}

size_t ct_malloc_usable_size(void *pointer) {
    return malloc_usable_size(pointer);
}

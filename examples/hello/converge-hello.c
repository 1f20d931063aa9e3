/*
 * converge-hello — the process of the example service (examples/web.yaml):
 * a tiny HTTP server that answers every request with
 * "hello from $CONVERGE_NAME" on port $CONVERGE_PORT_HTTP, the name and
 * port its node agent gives each replica. It exits 0 on SIGTERM (the kill
 * policy's signal) and 2 when its environment is not a replica's.
 *
 * One connection at a time, with a receive timeout: an example, not a
 * server to put in front of users.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
    (void)sig;
    stopping = 1;
}

static int listen_on(const char *addr, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 16) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads the request up to the end of its headers (or 2 s), then answers. */
static void serve(int conn, const char *body)
{
    struct timeval tv = {2, 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char req[4096];
    size_t len = 0;
    while (len < sizeof(req) - 1) {
        ssize_t n = read(conn, req + len, sizeof(req) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        req[len] = 0;
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
            break;
    }
    char resp[1024];
    int n = snprintf(resp, sizeof(resp),
                     "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     strlen(body), body);
    if (n > 0 && write(conn, resp, (size_t)n) < 0)
        perror("converge-hello: write");
}

int main(void)
{
    const char *name = getenv("CONVERGE_NAME"), *port_text = getenv("CONVERGE_PORT_HTTP");
    const char *addr = getenv("CONVERGE_ADDRESS");
    int port = port_text ? atoi(port_text) : 0;
    if (!name || port <= 0 || port > 65535) {
        fprintf(stderr, "converge-hello: CONVERGE_NAME and CONVERGE_PORT_HTTP (1..65535) "
                        "must be set (a Converge::Service replica has them)\n");
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: accept returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int fd = listen_on(addr && addr[0] ? addr : "0.0.0.0", port);
    if (fd < 0) {
        fprintf(stderr, "converge-hello: cannot listen on port %d: %s\n", port, strerror(errno));
        return 1;
    }
    char body[512];
    snprintf(body, sizeof(body), "hello from %s\n", name);
    fprintf(stderr, "converge-hello: %s listening on port %d\n", name, port);
    while (!stopping) {
        int conn = accept(fd, NULL, NULL);
        if (conn < 0)
            continue; /* EINTR on SIGTERM: the loop ends */
        serve(conn, body);
        close(conn);
    }
    close(fd);
    fprintf(stderr, "converge-hello: %s stopping\n", name);
    return 0;
}

#ifndef KVCACHE_CHIREDIS_SHIM_H
#define KVCACHE_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#include <sys/socket.h>

/// The reply's i-th element (Swift does not import the `element` array's C type well).
static inline redisReply *kvcache_reply_element(redisReply *reply, size_t index) {
    return reply->element[index];
}
#endif

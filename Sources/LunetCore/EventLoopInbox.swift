import Glibc

/// Work handed in from other threads, behind a pthread mutex (clean and fast under TSan).
final class Inbox: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var items: [@Sendable () -> Void] = []
    private var count = 0

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func push(_ work: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(&mutex)
        items.append(work)
        count = items.count
        pthread_mutex_unlock(&mutex)
    }

    var isEmpty: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return items.isEmpty
    }

    func takeAll() -> [@Sendable () -> Void] {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if items.isEmpty { return [] }
        let all = items
        items.removeAll()
        return all
    }
}

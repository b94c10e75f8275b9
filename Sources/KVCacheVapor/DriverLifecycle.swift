#if Vapor
import Vapor

/// Refuses to boot an application whose KVCache did not open, and flushes and closes the
/// cache when the application shuts down.
struct DriverLifecycle: LifecycleHandler {
    let state: DriverState

    func willBoot(_ application: Application) throws {
        // The provider cannot throw; the open's error surfaces here, before any request.
        _ = try state.current.withLock { $0 }?.cache()
    }

    func shutdown(_ application: Application) {
        state.current.withLock { $0 }?.shutdownBlocking(logger: application.logger)
    }

    func shutdownAsync(_ application: Application) async {
        await state.current.withLock { $0 }?.shutdown(logger: application.logger)
    }
}
#endif

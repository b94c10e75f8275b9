import Hummingbird

/// The app both drivers serve: Hummingbird's PersistTests routes for reading a value.
enum PersistBenchRoutes {
    static func router(_ persist: some PersistDriver) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/persist/:tag") { _, context -> String? in
            try await persist.get(key: try context.parameters.require("tag"), as: String.self)
        }
        return router
    }
}

import FlipbookCore
@testable import FlipbookStorage
import Testing

/// The XML reader on the shapes S3 and STS answer with, and on what it must refuse.
struct XMLElementsTests {
    static let listing = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>media</Name><Prefix>a &amp; b/</Prefix>\
        <KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>\
        <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <Contents><Key> a &lt;b&gt; &quot;c&quot; &apos;d&apos; &#233;&#x65E5;.gif </Key><LastModified>2026-11-28T12:00:00.000Z</LastModified>\
        <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>434234</Size>\
        <Owner><ID>o</ID></Owner><StorageClass>STANDARD</StorageClass></Contents>
          <Contents><Key><![CDATA[x<y>&z]]></Key><Size>0</Size></Contents>
          <CommonPrefixes><Prefix>a &amp; b/sub/</Prefix></CommonPrefixes>
        </ListBucketResult>
        """

    @Test func readsAListing() throws {
        let xml = try XMLElements(parsing: Array(Self.listing.utf8))
        #expect(xml.rootName == "ListBucketResult")
        #expect(xml.first("IsTruncated") == "true")
        #expect(xml.first("NextContinuationToken") == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(xml.first("Prefix") == "a & b/")
        let contents = xml.all("Contents")
        #expect(contents.count == 2)
        #expect(contents[0]["Key"] == " a <b> \"c\" 'd' é日.gif ")
        #expect(contents[0]["ETag"] == "\"9b2cf535f27731c974343645a3985328\"")
        #expect(contents[0]["Size"] == "434234")
        #expect(contents[0]["ID"] == nil, "only direct children")
        #expect(contents[1]["Key"] == "x<y>&z")
        #expect(xml.all("CommonPrefixes") == [["Prefix": "a & b/sub/"]])
        #expect(xml.texts("Key").count == 2)
        #expect(try XMLElements.first("Missing", in: Array(Self.listing.utf8)) == nil)
    }

    @Test func readsErrorsAndUploads() throws {
        let error = Array("<Error><Code>NoSuchKey</Code><Message>The resource you requested does not exist</Message><Key>a/b</Key></Error>".utf8)
        #expect(try XMLElements(parsing: error).rootName == "Error")
        #expect(try XMLElements.first("Code", in: error) == "NoSuchKey")
        let upload = Array("<?xml version='1.0'?>\r\n<InitiateMultipartUploadResult xmlns='x'><Bucket>b</Bucket><Key>k</Key><UploadId>VXBsb2FkIElE+/=</UploadId><Empty/></InitiateMultipartUploadResult>".utf8)
        #expect(try XMLElements.first("UploadId", in: upload) == "VXBsb2FkIElE+/=")
        #expect(try XMLElements.first("Empty", in: upload) == "")
        // Prefixed names match by their local name; line ends are normalised.
        let prefixed = Array("<s:A xmlns:s='u'><!-- c --><s:B attr=\"x>y\">1\r\n2</s:B></s:A>".utf8)
        #expect(try XMLElements.first("B", in: prefixed) == "1\n2")
    }

    @Test func refusesWhatItDoesNotRead() {
        for bad in ["", "text", "<a>", "<a></b>", "<a></a><b></b>", "<a>&unknown;</a>", "<a>&#0;</a>", "<a>&#x110000;</a>", "<a>&amp</a>",
                    "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "<a><![CDATA[x</a>", "<a b='1></a>", "x<a></a>",
                    String(repeating: "<a>", count: 65) + String(repeating: "</a>", count: 65)] {
            #expect(throws: FlipbookError.self, "\(bad)") { try XMLElements(parsing: Array(bad.utf8)) }
        }
        #expect((try? XMLElements(parsing: Array((String(repeating: "<a>", count: 64) + String(repeating: "</a>", count: 64)).utf8))) != nil)
    }
}
